import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { UseRecorder } from './use-recorder.js';

/** The documented window: five calls or ten minutes after a search, four searches open at most. */
const USE_WINDOW_CALLS = 5;
const USE_WINDOW_MS = 10 * 60_000;
const USE_MAX_OPEN_SEARCHES = 4;

const search = {
  terms: ['create', 'issue'],
  hits: ['github_create_issue', 'gitlab_create_issue'],
};

/** A call of `tool` that succeeded, or failed, as the recorder is told of it. */
const succeeded = (tool: string) => ({ tool, isError: false });
const failed = (tool: string) => ({ tool, isError: true });

describe('UseRecorder', () => {
  it('records a successful call of a hit after a search', () => {
    const recorder = new UseRecorder();
    recorder.searched(search);
    expect(recorder.called(succeeded('github_create_issue'))).toEqual({
      terms: ['create', 'issue'],
      tool: 'github_create_issue',
    });
  });

  it('records nothing for a call without a search, a failed call, or a tool that was not a hit', () => {
    const recorder = new UseRecorder();
    expect(recorder.called(succeeded('github_create_issue'))).toBeUndefined();
    recorder.searched(search);
    expect(recorder.called(failed('github_create_issue'))).toBeUndefined();
    expect(recorder.called(succeeded('adb_tap'))).toBeUndefined();
    // A retry that succeeds inside the window is learned.
    expect(recorder.called(succeeded('github_create_issue'))?.tool).toBe(
      'github_create_issue',
    );
  });

  it(`closes the window after ${USE_WINDOW_CALLS} calls or 10 minutes`, () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const recorder = new UseRecorder();
    recorder.searched(search);
    for (let index = 0; index < USE_WINDOW_CALLS; index += 1) {
      expect(recorder.called(succeeded('adb_tap'))).toBeUndefined();
    }
    expect(recorder.called(succeeded('github_create_issue'))).toBeUndefined();

    recorder.searched(search);
    for (let index = 0; index < USE_WINDOW_CALLS - 1; index += 1) {
      recorder.called(failed('adb_tap'));
    }
    expect(recorder.called(succeeded('gitlab_create_issue'))).toBeDefined();

    recorder.searched(search);
    vi.advanceTimersByTime(USE_WINDOW_MS + 1);
    expect(recorder.called(succeeded('github_create_issue'))).toBeUndefined();
  });

  it('credits a tool once per search, the most recent search that listed it, and several tools of one search', () => {
    const recorder = new UseRecorder();
    recorder.searched(search);
    recorder.searched({
      terms: ['open', 'ticket'],
      hits: ['github_create_issue'],
    });
    expect(recorder.called(succeeded('github_create_issue'))?.terms).toEqual([
      'open',
      'ticket',
    ]);
    expect(recorder.called(succeeded('github_create_issue'))).toBeUndefined();
    expect(recorder.called(succeeded('gitlab_create_issue'))?.terms).toEqual([
      'create',
      'issue',
    ]);
  });

  it('ignores a browse without terms and a search without hits', () => {
    const recorder = new UseRecorder();
    recorder.searched({ terms: [], hits: ['github_create_issue'] });
    recorder.searched({ terms: ['x'], hits: [] });
    expect(recorder.called(succeeded('github_create_issue'))).toBeUndefined();
  });

  it(`keeps at most ${USE_MAX_OPEN_SEARCHES} open searches`, () => {
    const recorder = new UseRecorder();
    for (let index = 0; index <= USE_MAX_OPEN_SEARCHES; index += 1)
      recorder.searched({ terms: [`s${index}`], hits: [`t_${index}`] });
    expect(recorder.called(succeeded('t_0'))).toBeUndefined();
    expect(recorder.called(succeeded('t_1'))?.terms).toEqual(['s1']);
  });
});
