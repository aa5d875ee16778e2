import { describe, expect, it } from 'vitest';
import { analyzeQuery, analyzeText, splitWords } from './tokenizer.js';

describe('splitWords', () => {
  it('splits snake, kebab, camel, dotted names and digits', () => {
    expect(splitWords('adb_install_apk')).toEqual(['adb', 'install', 'apk']);
    expect(splitWords('install-apk')).toEqual(['install', 'apk']);
    expect(splitWords('installApk')).toEqual(['install', 'apk']);
    expect(splitWords('HTMLParser.parseJSON2Yaml')).toEqual([
      'html',
      'parser',
      'parse',
      'json',
      '2',
      'yaml',
    ]);
    expect(splitWords('base64 mp3')).toEqual(['base', '64', 'mp', '3']);
  });

  it('makes each character of unsegmented scripts a word and keeps other scripts whole', () => {
    expect(splitWords('必应搜索 abc')).toEqual(['必', '应', '搜', '索', 'abc']);
    expect(splitWords('Привет мир')).toEqual(['привет', 'мир']);
  });
});

describe('analyzeText', () => {
  it('lower-cases, drops stop words and stems', () => {
    expect(analyzeText('Installing the APKs on devices')).toEqual([
      'instal',
      'apk',
      'devic',
    ]);
    expect(analyzeText('install apk')).toEqual(analyzeText('installs APK'));
  });

  it('never throws on odd input', () => {
    expect(analyzeText('')).toEqual([]);
    expect(analyzeText('\u0000\uFFFF😀')).toEqual([]);
  });
});

describe('analyzeQuery', () => {
  it('keeps the surface word and flags identifiers', () => {
    expect(analyzeQuery('use adb_tap, please!')).toEqual([
      { word: 'use', terms: [] },
      {
        word: 'adb_tap',
        terms: ['adb', 'tap', 'adb_tap'],
        identifier: 'adb_tap',
      },
      { word: 'please', terms: [] },
    ]);
  });
});
