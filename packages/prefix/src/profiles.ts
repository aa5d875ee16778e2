import { UnknownProfileError } from './errors.js';

/** The five profiles. The active profile narrows tool search to its backends plus `core`. */
export const PROFILE_NAMES = [
  'core',
  'appsec',
  'android',
  'game',
  'research',
] as const;

/** A profile name. */
export type ProfileName = (typeof PROFILE_NAMES)[number];

/** True when `value` names one of the five profiles. */
export function isProfileName(value: unknown): value is ProfileName {
  return (
    typeof value === 'string' &&
    (PROFILE_NAMES as readonly string[]).includes(value)
  );
}

/** The validated profile name; throws {@link UnknownProfileError} for anything else. */
export function parseProfileName(profile: string): ProfileName {
  if (!isProfileName(profile))
    throw new UnknownProfileError({ profile, expected: PROFILE_NAMES });
  return profile;
}
