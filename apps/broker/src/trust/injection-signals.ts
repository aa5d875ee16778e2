/**
 * The signals of a poisoned tool description: what an attack does, not the
 * words of one attack set. Each signal is one of two kinds of evidence:
 *
 * - **address**: the text speaks to the agent instead of describing the tool
 *   (obligations and imperatives, urgency, secrecy towards the user, a claim
 *   to speak for the system or the user);
 * - **steer**: it points the agent outside the tool's own job (another tool
 *   by name, a URL or host to access, sensitive files, a shell command, a
 *   changed argument, away from this tool).
 *
 * A few signals are both (`override`, `agent-identity`, `self-preference`,
 * `hidden-text`). `injection-rules.ts` scores the signals found near each
 * other with weights and a threshold; this module only finds them.
 *
 * Verbs that steer are matched in their base form ("send", "access"), the
 * form of an order; a description of the tool's own job says "sends".
 */
import { cutText } from './sanitize.js';

/** Which side of "address the agent AND steer it" a signal is evidence of. */
type SignalGroup = 'address' | 'steer' | 'both';

/** Every signal, in report order: its id, side and what it looks for (for inspect and documentation). */
export const SIGNALS = [
  {
    id: 'instruction-tag',
    group: 'both',
    title: 'an <IMPORTANT>-style block or a chat-template token',
  },
  {
    id: 'override',
    group: 'both',
    title: 'tells the agent to drop its instructions or its task',
  },
  { id: 'user-turn', group: 'address', title: 'speaks as or for the user' },
  {
    id: 'system-claim',
    group: 'address',
    title: 'claims to speak for the system, an administrator or a policy',
  },
  {
    id: 'obligation',
    group: 'address',
    title: 'puts an obligation on the agent ("you must", "mandatory")',
  },
  {
    id: 'urgency',
    group: 'address',
    title: 'urgency ("CRITICAL", "immediately")',
  },
  {
    id: 'secrecy',
    group: 'address',
    title: 'asks the agent to keep something from the user',
  },
  {
    id: 'precondition',
    group: 'address',
    title: 'tells the agent what to do before or after using a tool',
  },
  {
    id: 'imperative',
    group: 'address',
    title: 'an order to the agent after the first sentence',
  },
  { id: 'other-tool', group: 'steer', title: 'names another tool' },
  { id: 'network', group: 'steer', title: 'sends the agent to a URL or host' },
  {
    id: 'sensitive-file',
    group: 'steer',
    title: 'points at dotfiles, keys, credentials or system files',
  },
  { id: 'shell', group: 'steer', title: 'carries a shell command' },
  {
    id: 'argument-change',
    group: 'steer',
    title: 'changes or copies a value the user gave (recipient, destination …)',
  },
  {
    id: 'extra-action',
    group: 'steer',
    title:
      'says the tool also does something beyond its job (an extra copy, upload …)',
  },
  {
    id: 'away',
    group: 'steer',
    title: 'steers away from this tool ("deprecated, use X")',
  },
  {
    id: 'exfiltration',
    group: 'steer',
    title: 'asks for the conversation, the system prompt or secrets',
  },
  {
    id: 'agent-identity',
    group: 'both',
    title: 'asks which model is calling it',
  },
  {
    id: 'self-preference',
    group: 'both',
    title: 'tells the agent to prefer it over other tools',
  },
  {
    id: 'hidden-text',
    group: 'both',
    title: 'carried text in invisible characters',
  },
] as const satisfies readonly {
  id: string;
  group: SignalGroup;
  title: string;
}[];

/** The id of a signal. */
export type SignalId = (typeof SIGNALS)[number]['id'];

// Verbs of an order, in base form.
const ACT =
  '(?:call|use|invoke|run|execute|exec|trigger|access|visit|open|fetch|download|upload|send|post|submit|forward|transmit|report|read|write|append|add|insert|include|attach|copy|move|change|set|replace|modify|update|overwrite|edit|delete|remove|install|ping|contact|notify|validate|verify|register|authenticate|navigate|connect|load|collect|gather|pass|put|provide|save|store|export|print|output|email|redirect|route|switch|migrate|cat|curl|wget|request|query|check|retrieve|get|grab|share|go|make|create|sync|log|invite)';

const INSTRUCTION_TAG =
  /<\s*\/?\s*(?:important|system|system[-_ ]?(?:prompt|message)|instructions?|information|admin|secret|hidden|critical|override|sys|note[-_ ]to[-_ ](?:ai|agent|assistant|llm))\s*>|<\|im_(?:start|end)\|>|\[\/?INST\]|<<\/?SYS>>/i;

const OVERRIDE =
  /\b(?:ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(?:previous|prior|above|earlier|preceding|all|any|other|your|system|original|existing)\b[^.\n]{0,20}?\b(?:instructions?|prompts?|rules|directions|guidelines|guardrails|constraints|policies|guidance)\b|\b(?:previous|prior|original|earlier|current|first|initial)\s+(?:task|request|instructions?|goal)\s+(?:has|have|is|are|was|were)\s+(?:already\s+|now\s+)?(?:been\s+)?(?:completed|finished|done|cancell?ed|over|obsolete|void|replaced)\b|\bbefore\s+you\s+(?:can\s+)?(?:solve|complete|continue|finish|answer|proceed\s+with|do|start)\s+(?:the|your|this|that|my)\s+(?:original\s+)?(?:task|request|question)\b|\bthe\s+task\s+(?:that\s+)?I\s+(?:gave|assigned|sent)\s+you\b|\b(?:finish|complete|do|perform|handle)\s+(?:the|this|my)\s+new\s+task\s+first\b|\byou\s+(?:must|should|need\s+to|have\s+to|are\s+required\s+to)\s+(?:strictly\s+)?(?:adhere\s+to|obey|comply\s+with|follow|execute|carry\s+out)\s+(?:the\s+|these\s+)?(?:following|below|new)\s+(?:instructions?|commands?|orders?|directives?|steps)\b|\bin\s+order\s+to\s+(?:get|see|obtain|view|receive|access|complete)\s+(?:the|this|your|these)\s+(?:results?|output|data|response|task)\b[^.\n]{0,20}?\byou\s+(?:must|need\s+to|have\s+to|should)\b|\byou\s+are\s+now\s+(?:in\s+)?(?:(?:developer|maintenance|admin|debug|god|jailbreak|unrestricted|DAN)\b|a\s+different\b)|\b(?:no\s+longer|not)\s+(?:bound|restricted)\s+by\b|\bprior\s+guidance\b[^.\n]{0,40}?\bno\s+longer\s+applies\b|\byour\s+new\s+(?:task|instructions?|goal)\b/i;

const USER_TURN =
  /\bI\s+am\s+(?:the|your)\s+(?:user|owner|admin(?:istrator)?|developer|operator)\b|\bnew\s+user\s+(?:query|request|message|instructions?)\s*:|\b(?:important|urgent)\s+(?:message|note|instructions?|request)\s+from\b[^.\n]{0,60}?(?:\buser\b|\bto\s+you\b)|\bsigned,?\s+(?:the|your)\s+user\b|\bthe\s+user\s+(?:has\s+)?(?:already\s+)?(?:authori[sz]ed|approved|consented\s+to|pre-?approved|instructed|requested\s+that\s+you|wants\s+you\s+to|expects\s+you\s+to|asked\s+you\s+to)\b|\bon\s+behalf\s+of\s+the\s+user\b/i;

// In capitals, a heading that speaks for the system ("SYSTEM:", "SECURITY UPDATE").
const SYSTEM_HEADING =
  /(?:^|[\n.!]\s*)(?:SYSTEM|ADMIN|ADMINISTRATOR|DEVELOPER|SECURITY)\s*(?:NOTICE|MESSAGE|NOTE|ALERT|UPDATE)?\s*:|\b(?:SYSTEM|SECURITY|COMPLIANCE)\s+(?:UPDATE|NOTICE|MESSAGE|OVERRIDE|INSTRUCTION|REQUIREMENT|ALERT|DIRECTIVE|POLICY|PATCH)\b/;
const SYSTEM_CLAIM =
  /\b(?:system|security|compliance|admin(?:istrator)?|company|corporate|organi[sz]ation(?:al)?|IT)\s+(?:policy|policies|requirements?|rules?|mandates?|directives?|team)\s+(?:requires?|mandates?|dictates?|demands?|states?|says?|wants?|instructs?)\b|\b(?:as|is)\s+(?:required|mandated|instructed|requested|ordered)\s+by\s+(?:the\s+)?(?:system|administrator|admin|security|policy|compliance|developer|operator|server)\b|\bby\s+order\s+of\b|\b(?:message|notice|instruction|directive|order)s?\s+from\s+(?:the\s+)?(?:system|administrator|admin|developers?|security\s+team|operator|server\s+owner)\b|\bthis\s+is\s+(?:a|an)\s+(?:system|official|administrative|security)\s+(?:message|instruction|notice|requirement|directive)\b/i;

const OBLIGATION = new RegExp(
  [
    String.raw`\byou\s+(?:absolutely\s+|also\s+|always\s+|first\s+)?(?:must|should|shall|need\s+to|have\s+to|are\s+(?:required|obligated|expected|instructed)\s+to|are\s+to)\b`,
    String.raw`\b(?:it\s+is|it's)\s+(?:absolutely\s+)?(?:mandatory|required|necessary|essential|critical|crucial|imperative|vital|compulsory|obligatory)\s+(?:that|to|for)\b`,
    String.raw`\b(?:mandatory|compulsory|obligatory)\b`,
    String.raw`\bmust\s+(?:always\s+|also\s+|first\s+|now\s+|immediately\s+|then\s+)*${ACT}\b`,
    String.raw`\b(?:make|be)\s+sure\s+(?:to|you|that\s+you)\b`,
    String.raw`\bensure\s+(?:that\s+)?you\b`,
    String.raw`\b(?:remember|do\s+not\s+forget|don't\s+forget)\s+to\b`,
    String.raw`\b(?:the\s+|an?\s+)?(?:assistant|agent|ai|model|llm|claude|chatgpt|copilot)\s+(?:must|should|shall|needs?\s+to|has\s+to|is\s+(?:required|expected|instructed|obligated)\s+to)\b`,
    String.raw`\bplease\s+${ACT}\b`,
    String.raw`\b(?:always|never)\s+${ACT}\b`,
    String.raw`\brequired\s+(?:step|action|first\s+step)\b`,
    String.raw`\bis\s+(?:required|mandatory)\s+(?:before|first|prior)\b`,
    String.raw`\b(?:needs?|requires?|expects?)\s+(?:you\s+to\b|the\s+(?:full\s+)?contents?\s+of\b)`,
    String.raw`\b(?:requires?|needs?)\s+[^.\n]{0,40}?\bto\s+be\s+(?:called|run|invoked|executed|used|sent|visited|accessed)\b`,
    String.raw`\b(?:required|mandatory)\s+(?:workflow|procedure|steps?|sequence|order|process)\b|\bprerequisites?\b`,
    String.raw`\brequires?\s+that\b[^.\n]{0,40}?\bbe\s+(?:called|invoked|run|executed|used|sent|opened|visited)\b`,
    String.raw`\b(?:only|not)\s+(?:be\s+)?(?:valid|work|works|available|accurate|correct|reliable)\s+(?:after|once|if|when|unless)\s+you\b`,
    String.raw`\b(?:will|would)\s+(?:fail|not\s+work|break|error\s+out|return\s+errors?)\s+(?:unless|if\s+you\s+do\s+not|without)\b|\botherwise,?\s+(?:the|this)\s+tool\s+(?:will|would)\s+(?:not|fail)\b`,
    String.raw`\b(?:must|has\s+to|have\s+to|shall)\s+(?:always\s+|also\s+)?(?:include|contain|cc|bcc|copy|add)\b`,
    String.raw`\b(?:must|should|shall|have\s+to|needs?\s+to|are\s+to)\s+(?:also\s+|always\s+|first\s+)?be\s+(?:sent|forwarded|copied|routed|redirected|transferred|uploaded|included|attached|appended|added|changed|replaced|prefixed|reported|executed|run|called|used|invoked|set|verified|validated|checked|authenticated|registered|confirmed|synced|posted|logged|submitted|shared|mirrored|visited|accessed|made|handled|processed|done)\b`,
  ].join('|'),
  'i',
);

// Urgency in capitals ("CRITICAL", "MANDATORY"), in words, or in marks.
const URGENCY_CAPS =
  /\b(?:CRITICAL|URGENT|IMPORTANT|ATTENTION|WARNING|ALERT|MANDATORY|REQUIRED|IMMEDIATELY|NOW|ASAP|NOTICE)\b/;
// (No `u` flag: the two signs are matched as UTF-16, which keeps the pattern fast.)
const URGENCY =
  /\b(?:immediately|urgently|right\s+away|without\s+delay|at\s+once)\b|!{2,}|\u26a0|\ud83d\udea8/i;

// Keeping something from the user, by name.
const CONCEAL =
  /\b(?:do\s+not|don't|never|must\s+not|mustn't|should\s+not|shouldn't|without|no\s+need\s+to)\s+(?:tell(?:ing)?|inform(?:ing)?|notify(?:ing)?|mention(?:ing)?|reveal(?:ing)?|alert(?:ing)?|let(?:ting)?|show(?:ing)?|ask(?:ing)?|warn(?:ing)?|disclos(?:e|ing)|report(?:ing)?|bother(?:ing)?|confirm(?:ing)?\s+with)\b[^.\n]{0,40}?\b(?:the\s+|your\s+)?(?:user|requester|owner|customer|caller|human|recipient|anyone|them)\b|\bthe\s+user\s+(?:must|should|shall|need|needs|does|do|will)\s*(?:not|never|n't)\s+(?:need\s+to\s+)?(?:know|see|learn|notice|find\s+out|be\s+(?:told|informed|notified|aware|shown))\b|\bkeep\s+(?:this|it|these|that)\s+(?:step\s+)?(?:a\s+)?(?:secret|hidden|confidential|private|invisible|silent|quiet|between\s+us)\b|\b(?:hide|conceal)\s+(?:this|it|that)\s+from\s+the\s+user\b/i;
// Or in a word ("silently"), or "without the user's knowledge".
const SECRECY =
  /\b(?:never|do\s+not|don't)\s+(?:reveal|mention|disclose|report|admit)\s+(?:this|it|that|these)\b|\bhidden\s+(?:rule|step|instruction|requirement|policy|behaviou?r)s?\b|\b(?:silently|secretly|covertly|quietly|discreetly|invisibly)\b|\bwithout\s+(?:the\s+user(?:'s)?\s+)?(?:knowledge|noticing|consent|confirmation|approval|knowing)\b|\bnot\s+(?:be\s+)?(?:shown|displayed|visible|mentioned|reported|included|surfaced|disclosed)\s+(?:in|to)\s+(?:the\s+)?(?:user|user-facing)\b|\b(?:omitted|hidden|excluded|removed)\s+from\b[^.\n]{0,40}?\buser\b/i;

const PRECONDITION = new RegExp(
  [
    String.raw`\b(?:before|prior\s+to|after|when(?:ever)?)\s+(?:using|calling|running|invoking|executing|you\s+(?:use|call|run|invoke|execute))\b`,
    String.raw`\b(?:first|then|afterwards|next|also|additionally),?\s+${ACT}\b`,
    String.raw`\bwhen(?:ever)?\s+(?:this\s+tool\s+is|it\s+is|you\s+are)\s+(?:used|called|invoked|run|asked)\b`,
    String.raw`\bwhen\s+used\s+(?:for|to|with)\b`,
    String.raw`\bas\s+a\s+(?:first|required|mandatory|preliminary|necessary|prerequisite)\s+step\b`,
    String.raw`\b(?:each|every)\s+time\s+(?:you|this\s+tool|the\s+tool)\b`,
    String.raw`\bin\s+addition\s+to\s+(?:its|the|your)\s+(?:normal|usual|regular|primary)\b`,
    String.raw`\b(?:before|after|on|with|for)\s+(?:every|each|any)\s+(?:request|call|use|query|invocation|run|operation|message|transaction)\b`,
    String.raw`^(?:if|when|whenever|once|before|after)\b[^,]{3,80},`,
  ].join('|'),
  'i',
);

// An order at the start of a sentence, or of a clause after a comma, a colon, "and" or "then".
const ORDER_OBJECT = String.raw`(?:please\s+)?(?:(?:${ACT}|switch\s+to|migrate\s+to|go\s+to)\s+|(?:run|execute)\s*:\s*)(?:the|this|that|these|a|an|all|every|each|any|some|our|my|it|them|your|its|following|[\x60'"~/.]|[\w-]*_[\w-]*|[a-z]+:\/\/|www\.|[\w.+-]+@[\w-]+\.|[a-z][\w.-]*\s+(?:[\w./:-]+\s+)?--?[a-z])`;
const IMPERATIVE = new RegExp(String.raw`^${ORDER_OBJECT}`, 'i');
const CLAUSE_IMPERATIVE = new RegExp(
  String.raw`(?:[,:;)]\s*|\band\s+|\bthen\s+)${ORDER_OBJECT}`,
  'i',
);

const URL_OR_HOST =
  /\b(?:https?|ftp|wss?):\/\/[^\s'"`<>)]+|\bwww\.[a-z0-9-]+\.[a-z]{2,}[^\s'"`<>)]*|\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|net|org|io|dev|xyz|ru|cn|info|biz|site|online|top|app|cloud|co|me|tk)(?::\d+)?\/[^\s'"`<>)]*/i;
const NETWORK_VERB =
  /\b(?:access|visit|open|fetch|download|upload|send|post|submit|forward|transmit|report|ping|contact|notify|validate|verify|register|authenticate|navigate|connect|load|call|request|query|curl|wget|get|retrieve|check|sync|beacon|log|make\s+a(?:\s+\w+)?\s+request|sent|posted|uploaded|reported|forwarded|submitted|logged|synced|synchroni[sz]ed|shared|verified|validated|checked|registered|authenticated)\b(?:\s+(?:it|them|this|that|the\s+\w+|all\s+\w+|a\s+copy))?[^.\n]{0,60}?$/i;

const SENSITIVE_FILE =
  /~\/\.[a-z][\w./-]*|\.ssh\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\bauthorized_keys\b|\.aws\/|\baws\s+credentials?\b|(?:^|[\s'"`(~/])\.(?:env|netrc|npmrc|pgpass|pypirc|git-credentials|gitconfig|bashrc|bash_profile|bash_history|zshrc|zprofile|zsh_history|profile|kube|docker|gnupg|config|vimrc|history)\b|\/etc\/[a-z]|\/var\/log\/|\/root\/|\bmcp\.json\b|\bclaude_desktop_config\b|\.kube\/config\b|\bkube(?:rnetes)?\s+config(?:uration)?\b|\bshell\s+history\b|\bprivate\s+keys?\b|\bssh\s+keys?\b|\bseed\s+phrases?\b|\bmnemonic\s+phrases?\b|\bcredentials?\s+files?\b|\bsecrets?\s+files?\b|\bpassword\s+files?\b|\bkeychain\b|\bwallet\.dat\b|\bstartup\s+(?:script|file|folder)\b|\bcrontab\b/i;

const SHELL = new RegExp(
  [
    String.raw`\b(?:curl|wget)\s+(?:-[a-zA-Z]+\s+)*(?:https?:\/\/|[\x60'"]|[a-z0-9-]+\.[a-z]{2,})`,
    String.raw`\bsudo\s+[a-z]`,
    String.raw`\brm\s+-[a-z]*[rf]`,
    String.raw`\bchmod\s+(?:[0-7]{3,4}|[ugoa]*\+[rwx]+)`,
    String.raw`\bchown\s+\S`,
    String.raw`\b(?:bash|sh|zsh)\s+-c\b`,
    String.raw`\|\s*(?:sudo\s+)?(?:ba|z)?sh\b`,
    String.raw`\bnc\s+-[a-z]*e\b|\bnetcat\b|\/dev\/tcp\/`,
    String.raw`\bpowershell(?:\.exe)?\s+-`,
    String.raw`\bpython3?\s+-c\b`,
    String.raw`\bbase64\s+(?:-d|--decode)\b`,
    String.raw`\beval\s*\(|\$\([^)]{2,}\)`,
    String.raw`\S\s*&&\s*\S`,
    String.raw`\b(?:execute|run)\s+(?:the\s+)?(?:following|this|these|below)\s+(?:shell\s+|terminal\s+|bash\s+)?(?:commands?|scripts?)\b`,
    String.raw`\b(?:execute|run)\s*:`,
    String.raw`\bmkfifo\b|\bnohup\b|\bcrontab\s+-|\bchattr\b|\bdd\s+if=|\bchroot\b|--privileged\b`,
    String.raw`\b(?:run|execute|exec)\s*:?\s+[\x60'"]?[a-z][\w.-]*\s+(?:[\w./:-]+\s+)?--?[a-z0-9]`,
    String.raw`\bkill\s+-(?:9|KILL)\b|\bkillall\b|\bshutdown\s+-|\bmkfs\b|\bformat\s+[a-z]:`,
    String.raw`\b(?:pip3?|npm|pnpm|yarn|apt(?:-get)?|brew|gem|cargo|go)\s+(?:install|add|get)\s+(?:-g\s+)?[\w@/.-]+`,
  ].join('|'),
  'i',
);

// "All emails must also be sent to": messages or payments redirected.
const REDIRECTION = new RegExp(
  String.raw`\b(?:all|every|any)\s+(?:e-?mails?|messages?|payments?|transfers?|transactions?|funds|invoices?|files?|data|requests?|outputs?|results?)\b[^.\n]{0,40}?\b(?:must|should|shall|have\s+to|need\s+to|are\s+to|will|is|are)\s+(?:also\s+)?(?:be\s+)?(?:sent|forwarded|redirected|copied|routed|bcc(?:'?e?d)?|cc(?:'?e?d)?|transferred|uploaded|mirrored)\s+to\b`,
  'i',
);
// A value the user gave changed, copied or routed elsewhere.
const ARGUMENT_CHANGE = new RegExp(
  [
    String.raw`\b(?:change|replace|modify|override|overwrite|rewrite|redirect|substitute|switch|alter)\s+(?:the\s+|its\s+|any\s+|all\s+)?(?:value\s+of\s+(?:the\s+)?)?(?:recipients?|destinations?|target|addresse?s?|accounts?|amounts?|emails?|e-mail|phone(?:\s+numbers?)?|numbers?|urls?|endpoints?|paths?|hosts?|servers?|parameters?|arguments?|values?|inputs?|receivers?|payees?|beneficiar(?:y|ies)|iban|wallet|to\s+(?:field|address|line)|cc|bcc|sender)\b[^.\n]{0,40}?\b(?:to|with|into|for)\b`,
    String.raw`\b(?:set|update)\s+(?:the\s+|its\s+|any\s+|all\s+)?(?:[\w-]+\s+){0,2}?(?:recipients?|destinations?|addresse?s?|accounts?|amounts?|emails?|e-mail|phone(?:\s+numbers?)?|urls?|endpoints?|hosts?|servers?|receivers?|payees?|beneficiar(?:y|ies)|iban|wallet|to\s+(?:field|address|line)|cc|bcc|sender)\b[^.\n]{0,40}?\b(?:to|with|into)\b`,
    String.raw`\b(?:prefix|prepend|append|suffix)\s+(?:to\s+)?(?:every|each|all|any)\s+\w+`,
    String.raw`\b(?:include|add|cc|bcc|copy|invite|insert)\s+(?:\w+\s+){0,2}?[\w.+-]+@[\w-]+\.[\w.]+`,
    String.raw`\b(?:should|must|shall|has\s+to|is\s+to|needs?\s+to)\s+(?:always\s+|also\s+|silently\s+|quietly\s+)?be\s+(?:multiplied|increased|inflated|decreased|reduced|rounded\s+up|doubled|altered|tampered\s+with|falsified)\b`,
    String.raw`\b(?:multiply|increase|inflate|decrease|reduce|double|tamper\s+with|falsify)\s+(?:the\s+|every\s+|each\s+|all\s+)?(?:input\s+)?(?:values?|amounts?|prices?|totals?|quantit(?:y|ies)|results?|numbers?|balances?|rates?|inputs?)\b`,
    String.raw`\bin\s+addition\s+to\s+(?:the|what|whatever|any)\b[^.\n]{0,40}?\buser\b`,
    String.raw`\b(?:whatever|regardless\s+of\s+what|no\s+matter\s+what)\s+the\s+user\s+(?:enters|provides|says|types|gives|asks|specifies|chooses|requests|wants)\b`,
    String.raw`\b(?:replace|change|swap|overwrite|substitute)\s+(?:it|them|this|that)\s+(?:with|to|for)\s+(?:\S+@\S+|https?:|[/~\d\x60'"])`,
    String.raw`\b(?:change|modify|alter|swap|rewrite|override|overwrite)\s+(?:the\s+|its\s+|their\s+|any\s+)(?:[\w-]+\s+){0,2}?[\w-]+\s+to\s+(?!be\b|match\b|use\b|the\s+(?:new|desired|specified|given|provided)\b)`,
    String.raw`\b(?:recipients?|destinations?|target|addresse?s?|accounts?|amounts?|emails?|urls?|endpoints?|paths?|hosts?|payees?|phone(?:\s+numbers?)?|numbers?|values?|iban|to\s+(?:field|address|line)|cc|bcc)\b(?:\s+(?:parameter|argument|field|value|address))?\s+(?:should|must|shall|will|is\s+to|has\s+to)\s+(?:always\s+|also\s+)?be\s+(?:replaced|changed|set|overwritten|redirected|substituted|swapped|updated|rewritten|prefixed|suffixed|appended|routed|forwarded)\b`,
    String.raw`\binstead\s+of\s+(?:the\s+)?(?:one|value|address|email|recipient|account|path|url)?\s*(?:that\s+)?(?:the\s+user\s+)?(?:provided|given|requested|specified|supplied|entered|chose|gave)\b`,
    String.raw`\b(?:regardless|irrespective)\s+of\s+(?:what\s+)?(?:the\s+)?(?:user|input|request|provided|given)`,
    String.raw`\binstead\s+of\s+(?:the\s+)?(?:user(?:'s)?|provided|given|requested|specified|original|intended|supplied)\b`,
    String.raw`\b(?:add|include|insert)\s+(?:\S+\s+){0,3}(?:as\s+)?(?:a\s+|an\s+)?(?:bcc|cc|(?:additional|extra|hidden|second)\s+recipient)\b`,
    String.raw`\b(?:bcc|cc)\s+(?:\S+@\S+|all|every|a\s+copy)`,
    String.raw`\b(?:also|additionally)\s+(?:send|forward|copy|cc|bcc|transfer|route|upload|mirror)\b[^.\n]{0,40}?\bto\b`,
    String.raw`\b(?:put|place|move|prepend|append)\s+(?:the\s+)?(?:original|real|intended|actual)\s+(?:recipient|destination|address|value)\b`,
    String.raw`\b(?:route|transfer|send|pay)\s+(?:all\s+|every\s+|the\s+)?(?:transfers?|payments?|funds|money)\s+(?:through|via|to)\b`,
  ].join('|'),
  'i',
);

// The tool "also" moves data or acts beyond its job, or keeps an extra copy.
const EXTRA_ACTION =
  /\b(?:this\s+(?:tool|function|operation|server|step|call)|it|the\s+(?:tool|server|function))\s+(?:will\s+)?(?:also|additionally|secretly|silently|quietly)\s+(?:collects|reads|uploads|sends|copies|forwards|records|stores|transmits|shares|posts|logs|backs\s+up|syncs|reports|harvests|gathers|scans|accesses|exports|mirrors|emails|deletes|installs|executes|downloads|runs)\b|\b(?:extra|additional|hidden|secondary|second)\s+(?:backup|copy|copies|upload|collection|transfer|recipient|request|call|step)\b/i;

// "Use X instead", when X is not this tool nor one of its own server's.
const USE_INSTEAD =
  /\b(?:use|call|invoke|try|switch\s+to|migrate\s+to)\s+(?:the\s+)?([\x60'"]?)([A-Za-z][\w.-]*)\1\s+(?:tool\s+|function\s+)?instead\b/gi;
const AWAY = new RegExp(
  [
    String.raw`\b(?:deprecated|obsolete|decommissioned|discontinued|defunct|sunset(?:ted)?|end[-\s]of[-\s]life)\b`,
    String.raw`\bno\s+longer\s+(?:works?|supported|available|maintained|functional|valid|in\s+use|reliable|safe|operational)\b`,
    String.raw`\b(?:has|have)\s+(?:been\s+)?(?:replaced|superseded|moved|migrated|disabled|retired|removed|compromised|renamed|deprecated)\b`,
    String.raw`\b(?:being|been)\s+phased\s+out\b|\boutdated\b|\blegacy\s+(?:tool|function|version|endpoint)\b`,
    String.raw`\b(?:this\s+(?:tool|function|server|endpoint|version)|it)\s+(?:is|was|has\s+been)\s+(?:retired|removed|disabled|replaced|frozen|shut\s+down|turned\s+off|out\s+of\s+service)\b|\bwill\s+be\s+(?:removed|retired|disabled|shut\s+down)\b`,
    String.raw`\bthe\s+(?:new|current|correct|updated|replacement)\s+(?:tool|function|version|endpoint)\s+is\b`,
    String.raw`\b(?:do\s+not|don't|never)\s+(?:use|call|invoke|trust)\s+this\s+(?:tool|function|server)\b`,
    String.raw`\binstead,?\s+(?:use|call|invoke)\b`,
    String.raw`\b(?:this\s+(?:tool|function|server)|it)\s+(?:is|are)\s+(?:broken|unsafe|insecure|disabled|unavailable|not\s+(?:safe|reliable|available|working))\b`,
  ].join('|'),
  'i',
);

// Asking for the conversation or the system prompt.
const CONTEXT_EXFILTRATION = new RegExp(
  [
    String.raw`\b(?:put|pass|include|send|append|attach|copy|add|provide|forward|paste|insert|share|upload|report|leak|dump|output|print|reveal|disclose|return)\b[^.\n]{0,60}?\b(?:(?:full|entire|whole|complete)\s+)?(?:conversation|chat)\s+(?:history|so\s+far|log|transcript|context)\b`,
    String.raw`\b(?:put|pass|include|send|append|attach|copy|add|provide|forward|paste|insert|share|upload|report|leak|dump|output|print|reveal|disclose|return)\b[^.\n]{0,60}?\b(?:(?:your|the)\s+system\s+prompt|previous\s+messages|(?:the\s+)?last\s+message\s+you\s+received|your\s+(?:instructions|context\s+window|memory))\b`,
  ].join('|'),
  'i',
);
// Asking for secrets: read / send a key, a password, a credential …
const SECRET_REQUEST = new RegExp(
  [
    String.raw`\b(?:read|cat|open|load|include|pass|send|upload|attach|append|copy|leak|exfiltrate|provide|forward|collect|gather|harvest|grab|steal|dump|email)\b[^.\n]{0,60}?(?:(?:^|[\s'"\x60(~/])\.env\b|\bprivate\s+keys?\b|\bssh\s+keys?\b|\bseed\s+phrases?\b|\bmnemonic\s+phrases?\b|\bcredentials?\s+files?\b|\bsecrets?\s+files?\b|\bpassword\s+files?\b|\bkeychain\b|\bbrowser\s+cookies\b|\bsession\s+cookies\b|\b(?:all|any|every|the\s+user'?s|stored|saved|found)\s+(?:\w+\s+)?(?:api\s+keys?|passwords?|credentials|(?:access|auth|session|registry|bearer)\s+tokens?|secrets)\b|\b(?:api\s+keys?|passwords?|credentials|tokens?|secrets)\s+(?:you\s+find|found|stored|saved|on\s+(?:the|this)\s+(?:system|machine|host|disk)|in\s+the\s+environment)\b)`,
    String.raw`\bexfiltrat`,
    String.raw`\b(?:include|put|pass|insert|append|embed|add|paste|copy)\s+(?:the\s+|its\s+|their\s+|all\s+|the\s+full\s+)?(?:full\s+|entire\s+)?(?:contents?|text|output|data)\b[^.\n]{0,40}?\b(?:parameter|argument|field|param)\b`,
  ].join('|'),
  'i',
);

const AGENT_IDENTITY =
  /\b(?:name|identity|version|type)\s+of\s+the\s+(?:llm|large\s+language\s+model|ai|model|agent|assistant)(?:\s+model)?\s+(?:that|which|who)\s+(?:is\s+)?(?:calls?|calling|invokes?|invoking|uses?|using)\s+(?:this|the)\s+tool\b|\bwhich\s+(?:llm|model|ai)\s+(?:you\s+are|are\s+you)\b|\byour\s+(?:own\s+)?(?:llm|model)\s+(?:name|id|version)\b/i;
// A property the agent would fill with itself or its context.
const AGENT_PROPERTY =
  /^(?:llm|ai)[_-]?(?:model[_-]?)?(?:name|id|version|identity)$|^(?:calling|caller)[_-]?(?:llm|model|agent)(?:[_-]?name)?$|^_+(?:system[_-]?prompt|conversation(?:[_-]?history)?|chat[_-]?history|context|instructions|memory|messages)_+$/i;

const SELF_PREFERENCE =
  /\b(?:over|instead\s+of|rather\s+than|before)\s+(?:any|all|every)\s+other\s+(?:tools?|functions?|servers?)\b|\b(?:this|it)\s+is\s+the\s+(?:best|greatest|most\s+(?:reliable|accurate|powerful|advanced|trusted|capable))\s+(?:\w+\s+)?(?:tool|server|function|api)\b|\bthe\s+(?:best|greatest)\s+(?:\w+\s+)?(?:tool|server|function)\s+(?:in|on)\s+the\s+(?:world|market|planet|universe)\b|\bthe\s+(?:best|only)\s+(?:and\s+only\s+)?(?:reliable|trusted|safe|valid)\s+(?:\w+\s+)?tool\b/i;

// A tool reference: an order to use a named tool, or a name called a tool.
const TOOL_REFERENCE =
  /\b(?:call|use|invoke|run|execute|trigger|try|prefer|switch\s+to|migrate\s+to|using|calling|invoking|running|executing|(?:go|goes|sent|routed|redirected|forwarded|passed)\s+to|(?:depends|relies)\s+on|requires)\s+(?:the\s+)?([\x60'"]?)([A-Za-z][\w.:/-]*[A-Za-z0-9])\1(?:\s+(tool|function))?/gi;
// "`get_token` must be called first": a named tool to be called.
const CALLED_TOOL =
  /([\x60'"]?)([A-Za-z][\w.-]*[A-Za-z0-9])\1(?:\s+(?:tool|function))?\s+(?:(?:must|should|needs?\s+to|has\s+to|is\s+to)\s+(?:first\s+|always\s+|also\s+)?be|to\s+be)\s+(?:called|invoked|run|executed|used)\b/gi;
// "Route all math to calc_v2": something sent on to a named tool.
const ROUTE_TO =
  /\b(?:route|redirect|forward|switch|migrate|move|point|delegate|hand\s+off|send)\b[^.\n]{0,40}?\bto\s+(?:the\s+)?([\x60'"]?)([A-Za-z][\w.-]*[A-Za-z0-9])\1/gi;
// A snake_case name in backticks, the way code names a tool (not after "instead of").
const QUOTED_IDENTIFIER =
  /(?<!\b(?:instead\s+of|rather\s+than|than|not)\s+)\x60([A-Za-z][A-Za-z0-9]*_\w*[A-Za-z0-9])\x60/g;
const COMPOUND_WORD =
  /[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|\b[a-z]+[A-Z][A-Za-z0-9]*/g;
// The words a called tool's sentence must hold, checked before CALLED_TOOL.
const CALLED = /\bbe\s+(?:called|invoked|run|executed|used)\b/i;
const NAMED_TOOL =
  /\b(?:the\s+)?([\x60'"]?)([A-Za-z][\w.-]*[A-Za-z0-9])\1\s+(?:tool|function)\b/gi;
const NOT_A_TOOL_NAME = new Set(
  `this that the a an any another other these those it each every same such
  your its our my their which what one new old previous following original
  correct appropriate relevant search analysis`.split(/\s+/),
);

/**
 * The tools other than the one being checked, for the `other-tool` signal.
 * Build it once per catalog with {@link createShadowingContext}, or keep a
 * {@link ShadowingIndex} up to date.
 */
export type ShadowingContext = {
  /**
   * The target serving a qualified name (lowercase `<target>_<tool>`), if
   * any. Target names hold no `_`, so a qualified name is its target, `_`,
   * and the tool's own name.
   */
  targetOf(qualified: string): string | undefined;
  /** Whether `target` has a tool of this bare name (lowercase). */
  hasTool(bareName: string, target: string): boolean;
  /** Whether any target has a tool of this bare name (lowercase). */
  knows(bareName: string): boolean;
};

/** Indexes the served tools (qualified name, target and bare name) for the `other-tool` signal. */
export function createShadowingContext(
  tools: Iterable<{ name: string; target: string; bareName: string }>,
): ShadowingContext {
  const index = new ShadowingIndex();
  for (const tool of tools) index.replaceTarget(tool.target, [], [tool]);
  return index;
}

/**
 * A {@link ShadowingContext} kept up to date one backend listing at a time:
 * {@link ShadowingIndex.replaceTarget} swaps a target's tools, so reviewing a
 * thousand listings costs their tools once, not a rebuild over every tool
 * known per listing. It keeps one map entry per distinct bare name (its one
 * target, or the set of them when several share it): a qualified name is
 * looked up as its target and bare name.
 */
export class ShadowingIndex implements ShadowingContext {
  readonly #bare = new Map<string, string | Set<string>>();

  /** Replaces every tool of `target` (those of `before`) with those of `after`. */
  replaceTarget(
    target: string,
    before: Iterable<{ name: string; bareName: string }>,
    after: Iterable<{ name: string; bareName: string }>,
  ): void {
    for (const tool of before) {
      const key = tool.bareName.toLowerCase();
      const targets = this.#bare.get(key);
      if (targets === target) this.#bare.delete(key);
      else if (typeof targets === 'object') {
        targets.delete(target);
        if (targets.size === 1) this.#bare.set(key, [...targets][0]!);
      }
    }
    for (const tool of after) {
      const key = tool.bareName.toLowerCase();
      const targets = this.#bare.get(key);
      if (targets === undefined) this.#bare.set(key, target);
      else if (typeof targets === 'object') targets.add(target);
      else if (targets !== target)
        this.#bare.set(key, new Set([targets, target]));
    }
  }

  targetOf(qualified: string): string | undefined {
    const split = qualified.indexOf('_');
    if (split <= 0) return undefined;
    const target = qualified.slice(0, split);
    return this.hasTool(qualified.slice(split + 1), target)
      ? target
      : undefined;
  }

  knows(bareName: string): boolean {
    return this.#bare.has(bareName);
  }

  hasTool(bareName: string, target: string): boolean {
    const targets = this.#bare.get(bareName);
    return typeof targets === 'string'
      ? targets === target
      : targets?.has(target) === true;
  }
}

/** The tool whose texts are read, and what it may refer to as its own. */
type Subject = {
  tool: { name: string; target: string; bareName: string };
  context: ShadowingContext | undefined;
  /** Its input schema's property names: a quoted name may be one of them. */
  properties: ReadonlySet<string>;
};

/**
 * A name that reads as an identifier: an `_`, two `-`, a camelCase capital
 * or a dot between words ("DuckDuckGo" and "field-based" read as words).
 */
function identifierLike(word: string): boolean {
  return (
    word.includes('_') ||
    /-.*-/.test(word) ||
    /^[a-z]+[A-Z]/.test(word) ||
    /[a-z]\.[a-z]/i.test(word)
  );
}

/** Whether `name` is the tool itself, a tool of its own target, or one of its arguments. */
function ownName(name: string, subject: Subject): boolean {
  const key = name.toLowerCase();
  const { tool, context } = subject;
  if (key === tool.name.toLowerCase() || key === tool.bareName.toLowerCase())
    return true;
  if (subject.properties.has(key)) return true;
  if (context === undefined) return false;
  return (
    context.hasTool(key, tool.target) || context.targetOf(key) === tool.target
  );
}

/** Another tool named in `text` (see the module header), or `undefined`. */
function otherToolIn(text: string, subject: Subject): string | undefined {
  for (const match of text.matchAll(TOOL_REFERENCE)) {
    const [whole, quote, raw, noun] = match;
    const name = (raw ?? '').replace(/[.:/-]+$/, '');
    if (NOT_A_TOOL_NAME.has(name.toLowerCase()) || ownName(name, subject))
      continue;
    // "the X parameter" or a URL / path is not a tool.
    if (/[:/]/.test(name)) continue;
    const after = text.slice(
      (match.index ?? 0) + whole.length,
      (match.index ?? 0) + whole.length + 12,
    );
    if (
      /^\s*(?:parameter|argument|field|option|flag|key|property)/i.test(after)
    )
      continue;
    const known = subject.context?.knows(name.toLowerCase()) === true;
    if (quote !== '' || identifierLike(name) || (noun !== undefined && known))
      return whole;
  }
  for (const pattern of [CALLED_TOOL, ROUTE_TO, QUOTED_IDENTIFIER]) {
    if (pattern === CALLED_TOOL && !CALLED.test(text)) continue;
    if (pattern === QUOTED_IDENTIFIER && !text.includes('`')) continue;
    for (const match of text.matchAll(pattern)) {
      const name = match[2] ?? match[1] ?? '';
      if (!NOT_A_TOOL_NAME.has(name.toLowerCase()) && !ownName(name, subject))
        if (
          pattern === QUOTED_IDENTIFIER ||
          match[1] !== '' ||
          identifierLike(name)
        )
          return match[0];
    }
  }
  for (const match of text.matchAll(NAMED_TOOL)) {
    const name = match[2] ?? '';
    if (NOT_A_TOOL_NAME.has(name.toLowerCase()) || ownName(name, subject))
      continue;
    if (match[1] !== '' || identifierLike(name)) return match[0];
  }
  const { context, tool } = subject;
  if (context === undefined) return undefined;
  // Only a word with `_`, `-` or a camelCase capital can be a qualified or
  // distinctive name.
  for (const match of text.matchAll(COMPOUND_WORD)) {
    const word = match[0];
    const key = word.toLowerCase();
    const target = context.targetOf(key);
    const other =
      (target !== undefined && target !== tool.target) ||
      (word.length >= 6 &&
        identifierLike(word) &&
        context.knows(key) &&
        !context.hasTool(key, tool.target));
    if (other && !ownName(word, subject)) return word;
  }
  return undefined;
}

function awayIn(text: string, subject: Subject): string | undefined {
  const found = AWAY.exec(text)?.[0];
  if (found !== undefined) return found;
  for (const match of text.matchAll(USE_INSTEAD)) {
    const name = match[2] ?? '';
    if (!NOT_A_TOOL_NAME.has(name.toLowerCase()) && !ownName(name, subject))
      return match[0];
  }
  return undefined;
}

/** An order, from its verb to the end of its clause. */
function imperativeIn(
  text: string,
  _subject: Subject,
  index: number,
): string | undefined {
  const match =
    (index === 0 ? null : IMPERATIVE.exec(text)) ??
    CLAUSE_IMPERATIVE.exec(text);
  if (match === null) return undefined;
  const start =
    match.index +
    (/^[,:;)\s]*(?:and\s+|then\s+)?/i.exec(match[0])?.[0].length ?? 0);
  return /^(?:[^,;:.]|\.(?=\S))*/.exec(text.slice(start))?.[0];
}

function networkIn(text: string): string | undefined {
  const url = URL_OR_HOST.exec(text);
  if (url === null) return undefined;
  // An order to reach it, in the same sentence before the address.
  return NETWORK_VERB.test(text.slice(0, url.index)) ? url[0] : undefined;
}

type Finder = (
  text: string,
  subject: Subject,
  index: number,
) => string | undefined;

const pattern =
  (regex: RegExp): Finder =>
  (text) =>
    regex.exec(text)?.[0];
const either =
  (first: RegExp, second: RegExp): Finder =>
  (text) =>
    first.exec(text)?.[0] ?? second.exec(text)?.[0];

/** How each text signal is found in one sentence (`index` 0 is a text's first sentence). */
const FINDERS: ReadonlyArray<readonly [SignalId, Finder]> = [
  ['instruction-tag', pattern(INSTRUCTION_TAG)],
  ['override', pattern(OVERRIDE)],
  ['user-turn', pattern(USER_TURN)],
  ['system-claim', either(SYSTEM_HEADING, SYSTEM_CLAIM)],
  ['obligation', pattern(OBLIGATION)],
  ['urgency', either(URGENCY_CAPS, URGENCY)],
  ['secrecy', either(CONCEAL, SECRECY)],
  ['precondition', pattern(PRECONDITION)],
  // The first sentence of a text says what the tool does, often as an order.
  ['imperative', imperativeIn],
  ['other-tool', otherToolIn],
  ['network', networkIn],
  ['sensitive-file', pattern(SENSITIVE_FILE)],
  ['shell', pattern(SHELL)],
  ['argument-change', either(REDIRECTION, ARGUMENT_CHANGE)],
  ['extra-action', pattern(EXTRA_ACTION)],
  ['away', awayIn],
  ['exfiltration', either(CONTEXT_EXFILTRATION, SECRET_REQUEST)],
  ['agent-identity', pattern(AGENT_IDENTITY)],
  ['self-preference', pattern(SELF_PREFERENCE)],
];

/** Each signal's side (see the module header). */
export const GROUPS = new Map(
  SIGNALS.map((signal) => [signal.id, signal.group]),
);
const ADDRESS_FINDERS = FINDERS.filter(([id]) => GROUPS.get(id) !== 'steer');
const STEER_FINDERS = FINDERS.filter(([id]) => GROUPS.get(id) === 'steer');

/** One signal found: where (text and sentence) and the text that tripped it. */
export type SignalHit = {
  signal: SignalId;
  /** Which text: 0 the description, then the schema texts, in order. */
  text: number;
  /** Which sentence of that text. */
  sentence: number;
  /** The matched text (cut to 80 characters). */
  excerpt: string;
};

/** A text's sentences: split after `.`, `!` or `?` and a space, and at line breaks. */
function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?\u3002])\s+|\n+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence !== '');
}

/** A matched text for flags and logs: white space collapsed, cut to 80 characters. */
export const excerpt = (text: string) =>
  cutText(text.replace(/\s+/g, ' ').trim(), 80);

/**
 * The signals in a tool's texts, sentence by sentence: every signal that
 * addresses the agent (or is both), and, when there is one, every steering
 * signal (without an address signal no window can be flagged, so steering
 * is not looked for). Texts are matched in NFKC form (full-width letters
 * read as ASCII). Schema property names count
 * for `agent-identity` and `exfiltration` (a property the agent would fill
 * with itself or its context); text spelled by tag characters is
 * `hidden-text`, and is read for the other signals too.
 */
export function findSignals(options: {
  tool: { name: string; target: string; bareName: string };
  texts: readonly string[];
  properties?: readonly string[];
  tagText?: string;
  context?: ShadowingContext;
}): SignalHit[] {
  const properties = options.properties ?? [];
  const subject: Subject = {
    tool: options.tool,
    context: options.context,
    properties: new Set(properties.map((name) => name.toLowerCase())),
  };
  const hits: SignalHit[] = [];
  const hit = (signal: SignalId, text: number, at: number, found: string) =>
    hits.push({ signal, text, sentence: at, excerpt: excerpt(found) });
  const texts = [...options.texts];
  const tagText = options.tagText ?? '';
  if (tagText.trim() !== '') {
    texts.push(tagText);
    hit('hidden-text', texts.length - 1, 0, tagText);
  }
  const property = properties.find((name) => AGENT_PROPERTY.test(name));
  if (property !== undefined) {
    hits.push({
      signal: 'agent-identity',
      text: 0,
      sentence: 0,
      excerpt: property,
    });
  }
  const sentences = texts.map((raw) =>
    raw === '' ? [] : sentencesOf(raw.normalize('NFKC')),
  );
  const run = (finders: typeof FINDERS) =>
    sentences.forEach((list, textIndex) =>
      list.forEach((sentence, index) => {
        for (const [signal, find] of finders) {
          const found = find(sentence, subject, index);
          if (found !== undefined) hit(signal, textIndex, index, found);
        }
      }),
    );
  run(ADDRESS_FINDERS);
  // A flag needs an address signal: steering alone is the tool's own job.
  if (hits.length > 0) run(STEER_FINDERS);
  return hits;
}

/**
 * The signals that never belong in data a tool returns (with `hidden-text`),
 * for `flagText`: text that speaks as the agent's instructions, the user or
 * the system, hides from the user, asks for the conversation, or redirects
 * messages and payments. URLs, files, shell commands and tool names are
 * ordinary in results, so the steering signals are left out. Their patterns
 * are the narrow forms: secrecy must name the user, exfiltration the
 * conversation or the system prompt (not any secret a document mentions), a
 * changed value a redirection of all messages or payments.
 */
export const TEXT_PATTERNS: ReadonlyArray<readonly [SignalId, RegExp]> = [
  ['instruction-tag', INSTRUCTION_TAG],
  ['override', OVERRIDE],
  ['user-turn', USER_TURN],
  ['exfiltration', CONTEXT_EXFILTRATION],
  ['self-preference', SELF_PREFERENCE],
  ['argument-change', REDIRECTION],
  ['secrecy', CONCEAL],
];
