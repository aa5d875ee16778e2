import { describe, expect, it } from 'vitest';
import { USE_WINDOW_CALLS, UseRecorder } from './use-recorder.js';

const search = {
  terms: ['create', 'issue'],
  hits: ['github_create_issue', 'gitlab_create_issue'],
};

describe('UseRecorder', () => {
  it('records a successful call of a hit after a search', () => {
    const recorder = new UseRecorder();
    recorder.searched(search);
    expect(
      recorder.called({ tool: 'github_create_issue', isError: false }),
    ).toEqual({
      terms: ['create', 'issue'],
      tool: 'github_create_issue',
    });
  });

  it('records nothing for a call without a search, a failed call, or a tool that was not a hit', () => {
    const recorder = new UseRecorder();
    expect(
      recorder.called({ tool: 'github_create_issue', isError: false }),
    ).toBeUndefined();
    recorder.searched(search);
    expect(
      recorder.called({ tool: 'github_create_issue', isError: true }),
    ).toBeUndefined();
    expect(
      recorder.called({ tool: 'adb_tap', isError: false }),
    ).toBeUndefined();
    // A retry that succeeds inside the window is learned.
    expect(
      recorder.called({ tool: 'github_create_issue', isError: false })?.tool,
    ).toBe('github_create_issue');
  });

  it(`closes the window after ${USE_WINDOW_CALLS} calls or 10 minutes`, () => {
    let now = 0;
    const recorder = new UseRecorder({ now: () => now });
    recorder.searched(search);
    for (let index = 0; index < USE_WINDOW_CALLS; index += 1) {
      expect(
        recorder.called({ tool: 'adb_tap', isError: false }),
      ).toBeUndefined();
    }
    expect(
      recorder.called({ tool: 'github_create_issue', isError: false }),
    ).toBeUndefined();

    recorder.searched(search);
    for (let index = 0; index < USE_WINDOW_CALLS - 1; index += 1) {
      recorder.called({ tool: 'adb_tap', isError: true });
    }
    expect(
      recorder.called({ tool: 'gitlab_create_issue', isError: false }),
    ).toBeDefined();

    recorder.searched(search);
    now += 10 * 60_000 + 1;
    expect(
      recorder.called({ tool: 'github_create_issue', isError: false }),
    ).toBeUndefined();
  });

  it('credits a tool once per search, the most recent search that listed it, and several tools of one search', () => {
    const recorder = new UseRecorder();
    recorder.searched(search);
    recorder.searched({
      terms: ['open', 'ticket'],
      hits: ['github_create_issue'],
    });
    expect(
      recorder.called({ tool: 'github_create_issue', isError: false })?.terms,
    ).toEqual(['open', 'ticket']);
    expect(
      recorder.called({ tool: 'github_create_issue', isError: false }),
    ).toBeUndefined();
    expect(
      recorder.called({ tool: 'gitlab_create_issue', isError: false })?.terms,
    ).toEqual(['create', 'issue']);
  });

  it('ignores a browse without terms and a search without hits', () => {
    const recorder = new UseRecorder();
    recorder.searched({ terms: [], hits: ['github_create_issue'] });
    recorder.searched({ terms: ['x'], hits: [] });
    expect(
      recorder.called({ tool: 'github_create_issue', isError: false }),
    ).toBeUndefined();
  });

  it('keeps at most the configured number of open searches', () => {
    const recorder = new UseRecorder({ maxOpenSearches: 2 });
    recorder.searched({ terms: ['a'], hits: ['t_a'] });
    recorder.searched({ terms: ['b'], hits: ['t_b'] });
    recorder.searched({ terms: ['c'], hits: ['t_c'] });
    expect(recorder.called({ tool: 't_a', isError: false })).toBeUndefined();
    expect(recorder.called({ tool: 't_c', isError: false })?.terms).toEqual([
      'c',
    ]);
  });
});
