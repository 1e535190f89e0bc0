import { devServerExtraArgs } from '../../workers/temporal-dev';

/** The `--dynamic-config-value` pairs of an argument list, as an object. */
function dynamicConfig(args: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  args.forEach((a, i) => {
    if (a !== '--dynamic-config-value') return;
    const [key, ...value] = args[i + 1].split('=');
    out[key] = JSON.parse(value.join('='));
  });
  return out;
}

test('every dev server of ours reads its transfer queue up to 1,000 times a second (the stock 20 made each hand-over wait for a 50 ms slot)', () => {
  expect(dynamicConfig(devServerExtraArgs())).toMatchObject({
    'history.transferProcessorMaxPollRPS': 1000,
    'frontend.enableUpdateWorkflowExecution': true,
    'system.enableEagerWorkflowStart': true,
  });
});

test("a caller's dynamic config overrides ours, once per key", () => {
  const args = devServerExtraArgs({
    'history.transferProcessorMaxPollRPS': 20,
    'limit.historyCount.suggestContinueAsNew': 150,
  });
  expect(dynamicConfig(args)).toMatchObject({
    'history.transferProcessorMaxPollRPS': 20,
    'limit.historyCount.suggestContinueAsNew': 150,
  });
  expect(args.filter((a) => a.startsWith('history.transferProcessorMaxPollRPS='))).toHaveLength(1);
});
