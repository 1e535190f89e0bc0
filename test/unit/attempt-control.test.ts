import { setImmediate as checkPhase, setTimeout as sleep } from 'node:timers/promises';
import { AttemptControl, UpstreamCall } from '../../activities/providers/upstream-call';

// An upstream attempt's timers start after its dispatch (the event loop's check phase), not on the
// path to the upstream request; the limits still end a call that is never answered.

const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('AttemptControl', () => {
  it('arms no timer before the call is dispatched, and its timers in the check phase after', async () => {
    const before = timeouts();
    const json = new AttemptControl(undefined, 5_000, 5_000);
    json.attach(new UpstreamCall(true));
    const stream = new AttemptControl(undefined, 5_000, 60_000);
    stream.attach(new UpstreamCall(false));
    expect(timeouts()).toBe(before);
    await checkPhase();
    // One timer for the JSON call (its idle and overall limits are the same), two for the stream.
    expect(timeouts()).toBe(before + 3);
    json.done();
    stream.done();
    expect(timeouts()).toBe(before);
  });

  it('arms nothing when the attempt ended before the check phase', async () => {
    const before = timeouts();
    const a = new AttemptControl(undefined, 5_000, 5_000);
    a.attach(new UpstreamCall(true));
    a.done();
    await checkPhase();
    expect(timeouts()).toBe(before);
  });

  it('ends a call that is never answered when its limit is over', async () => {
    const call = new UpstreamCall(true);
    const aborted = jest.spyOn(call, 'abort');
    const a = new AttemptControl(undefined, 30, 30);
    a.attach(call);
    await sleep(80);
    expect(a.timedOutAfter).toBe(30);
    expect(aborted).toHaveBeenCalledWith(new Error('timeout'));
    a.done();
  });
});
