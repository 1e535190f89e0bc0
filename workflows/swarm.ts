import { CancellationScope, isCancellation, patched } from '@temporalio/workflow';
import { tallyVotes } from '../reasoning/swarm-tally';
import { mapBounded } from './bounded';
import { swarmStepCount } from './job-rules';
import { failureMessage, modelActs, storeActs } from './job-steps';
import type { StepOutputRef, SwarmInput } from './job-types';
import { streams } from '../schema/workflow-ids';

type P = Record<string, any>;

/** Swarm runs: one registry of operations (map, vote, debate, fanout_reduce), each a small orchestration of model steps. */
export async function swarmWorkflow(input: SwarmInput): Promise<unknown> {
  const p = input.params as P;
  const lane: string = p.lane ?? 'svc-oracle';
  const progress = { done: 0, total: swarmStepCount(input.operation, p) };
  const save = (status: string, extra: { result?: unknown; error?: string | null } = {}) =>
    storeActs.saveSwarm({ tenantId: input.tenantId, runId: input.runId, status, progress, ...extra });
  const step = async (
    stepKey: string,
    prompt: string,
    opts: { system?: string; context?: string[] } = {},
  ): Promise<StepOutputRef> => {
    const out = await modelActs.runJobStep({
      tenantId: input.tenantId,
      jobId: input.runId,
      stepKey,
      lane,
      prompt,
      ...opts,
      stream: streams.swarm(input.runId),
    });
    progress.done++;
    return out;
  };
  try {
    await save('running');
    let result: unknown;
    if (input.operation === 'map') {
      const items = p.items as string[];
      const outs = await mapBounded(items, p.max_concurrency ?? 4, (item, i) =>
        step(`map-${i}`, String(p.prompt).replaceAll('{{item}}', item)),
      );
      result = { items: items.map((item, i) => ({ item, output_id: outs[i].outputId })) };
    } else if (input.operation === 'vote') {
      const options = p.options as string[] | undefined;
      const prompt = options?.length
        ? `${p.question}\nAnswer with exactly one of: ${options.join(' | ')}. Put your choice on the first line.`
        : `${p.question}\nPut your answer on the first line, then one sentence of reasoning.`;
      const outs = await mapBounded(
        Array.from({ length: p.voters as number }, (_, i) => i),
        8,
        (i) => step(`vote-${i}`, prompt, { system: `You are independent voter ${i + 1} of ${p.voters}.` }),
      );
      const tally = tallyVotes(
        outs.map((o) => o.snippet),
        options,
      );
      result = {
        answers: outs.map((o, i) => ({ voter: i + 1, output_id: o.outputId, answer: o.snippet.split('\n')[0] })),
        ...tally,
      };
    } else if (input.operation === 'debate') {
      const n = p.debaters as number;
      let positions: StepOutputRef[] = await mapBounded(
        Array.from({ length: n }, (_, i) => i),
        n,
        (i) =>
          step(`debate-r1-d${i}`, `${p.question}\nGive your position and your strongest argument.`, {
            system: `You are debater ${i + 1} of ${n}.`,
          }),
      );
      const rounds = [positions.map((o, i) => ({ debater: i + 1, output_id: o.outputId }))];
      for (let r = 2; r <= (p.rounds as number); r++) {
        const previous = positions;
        positions = await mapBounded(
          Array.from({ length: n }, (_, i) => i),
          n,
          (i) =>
            step(
              `debate-r${r}-d${i}`,
              `${p.question}\nCritique the other positions, then give your revised position.`,
              {
                system: `You are debater ${i + 1} of ${n}, round ${r}.`,
                context: previous.map((o, j) => `Debater ${j + 1}${j === i ? ' (you)' : ''}: ${o.snippet}`),
              },
            ),
        );
        rounds.push(positions.map((o, i) => ({ debater: i + 1, output_id: o.outputId })));
      }
      const verdict = await step(
        'debate-verdict',
        `${p.question}\nAs the judge, weigh the final positions and give the best-supported answer.`,
        {
          context: positions.map((o, j) => `Debater ${j + 1}: ${o.snippet}`),
        },
      );
      result = { rounds, verdict_output_id: verdict.outputId };
    } else if (input.operation === 'fanout_reduce') {
      const subtasks = p.subtasks as string[];
      const parts = await mapBounded(subtasks, p.max_concurrency ?? 4, (sub, i) =>
        step(`fan-${i}`, `${p.task}\nYour part: ${sub}`),
      );
      const reduced = await step(
        'reduce',
        p.reduce_prompt ?? `${p.task}\nCombine the partial results into one answer.`,
        {
          context: parts.map((o, i) => `${subtasks[i]}: ${o.snippet}`),
        },
      );
      result = {
        parts: subtasks.map((s, i) => ({ subtask: s, output_id: parts[i].outputId })),
        reduced_output_id: reduced.outputId,
      };
    } else {
      throw new Error(`unknown swarm operation ${input.operation}`);
    }
    await save('completed', { result });
    return result;
  } catch (err) {
    if (isCancellation(err)) {
      await CancellationScope.nonCancellable(() => save('cancelled'));
      throw err;
    }
    // Not cancellable: a cancel arriving during this write would leave the run running for good. Versioned: a cancel
    // during it closed the run at once, so only closed runs replay differently, but those are replayed too.
    const failed = () => save('failed', { error: failureMessage(err) });
    if (patched('swarm-failure-uncancellable')) await CancellationScope.nonCancellable(failed);
    else await failed();
    return null;
  }
}
