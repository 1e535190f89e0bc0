import { cutText } from '../../schema/snippet';
import { STEP_REF, type LiteralSave, type StepAction } from '../../schema/tasks';
import type { ActivityDeps } from '../deps';
import type { ModelRouter } from '../providers/types';
import type { StepRow } from '../store/tasks';
import { prepareDocument } from '../knowledge/pipeline';
import { insertDocument } from '../store/documents';
import { extractBody } from '../web/fetch-page';
import { saveTaskOutput, saveTaskOutputDocument } from '../store/task-outputs';
import type { StepSave } from '../store/task-runs';
import { StepPermanentError } from './errors';
import { safeFetch } from './safe-fetch';
import { postWebhook } from './webhook';
import { researchAction } from './research-action';

/** Largest result a step stores (characters). */
export const MAX_RESULT_CHARS = 200_000;

export interface ActionInput {
  deps: ActivityDeps;
  models: ModelRouter;
  tenantId: string;
  taskId: string;
  runId: string;
  step: StepRow;
  /** Args with `{{steps.<id>.result}}` already replaced. */
  args: Record<string, string>;
  depResults: Record<string, string>;
  signal: AbortSignal;
}

/** Replaces `{{steps.<id>.result}}` with the dependency's stored result. */
export function resolveArgs(args: Record<string, string>, depResults: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(args).map(([k, v]) => [k, v.replace(STEP_REF, (_m, id: string) => depResults[id] ?? '')]),
  );
}

/** The dependencies' results as one context block (in depends_on order). */
export function context(input: ActionInput): string {
  return input.step.depends_on
    .filter((id) => input.depResults[id])
    .map((id) => `[${id}]\n${input.depResults[id]}`)
    .join('\n\n');
}

function required(args: Record<string, string>, key: string, action: string): string {
  const v = args[key]?.trim();
  if (!v) throw new StepPermanentError(`The ${action} step needs args.${key}.`);
  return v;
}

async function fetchAction(input: ActionInput): Promise<string> {
  const url = required(input.args, 'url', 'fetch');
  const res = await safeFetch(url, {
    allowPrivate: input.deps.config.allowPrivateFetch,
    maxBytes: 2 * 1024 * 1024,
    timeoutMs: 20_000,
    signal: input.signal,
  });
  if (res.status >= 400) {
    const msg = `Fetching ${url} answered HTTP ${res.status}.`;
    if (res.status === 408 || res.status === 429 || res.status >= 500) throw new Error(msg);
    throw new StepPermanentError(msg);
  }
  // The same extraction as POST /v1/capabilities/web-fetch (main content, charset, PDF, JSON).
  let text: string;
  try {
    text = (await extractBody({ body: res.body, contentType: res.contentType, url: res.url }, {})).text;
  } catch (err) {
    throw new StepPermanentError(`Fetching ${url}: ${(err as Error).message}`);
  }
  return cutText(text.trim(), MAX_RESULT_CHARS);
}

/**
 * What a `save` step stores: the content as a tenant record (task_outputs, one per run and step)
 * and as a document of the tenant's knowledge store (listed by GET /v1/documents, found by
 * knowledge search), chunked (and embedded in hybrid mode). The step's result is the document id,
 * derived from the output id (one per run and step), so a retried activity gets back the document
 * its earlier attempt wrote instead of writing a second one.
 * @throws StepPermanentError when there is nothing to save
 */
export async function prepareSave(input: ActionInput): Promise<StepSave> {
  return saveOf(input.deps, {
    tenantId: input.tenantId,
    taskId: input.taskId,
    stepId: input.step.id,
    runId: input.runId,
    title: input.args.title ?? input.step.title,
    content: input.args.content ?? context(input),
  });
}

/**
 * The save of a step whose args are literal (no `{{steps.<id>.result}}`, content given), from what
 * the run's plan carries (`LiteralSave`): the same output and document as `prepareSave` on the step row.
 */
export function prepareLiteralSave(
  deps: ActivityDeps,
  ref: { tenantId: string; taskId: string; stepId: string; runId: string },
  lit: LiteralSave,
): Promise<StepSave> {
  return saveOf(deps, { ...ref, ...lit });
}

async function saveOf(
  deps: ActivityDeps,
  s: { tenantId: string; taskId: string; stepId: string; runId: string; title: string; content: string },
): Promise<StepSave> {
  const { title, content } = s;
  if (!content.trim())
    throw new StepPermanentError('The save step has nothing to save: give args.content or a dependency with a result.');
  const doc = await prepareDocument(deps, {
    tenantId: s.tenantId,
    sourceKind: 'ingest',
    title,
    mediaType: 'text/plain',
    sizeBytes: Buffer.byteLength(content),
    text: content,
    provenance: {
      source: `task:${s.taskId}/${s.stepId}`,
      task_id: s.taskId,
      step_id: s.stepId,
      run_id: s.runId,
    },
  });
  return { output: { title, content }, doc };
}

/**
 * Writes a save on its own (output row, then its document): for documents that do not fit the
 * statement that completes the step (vectors, many chunks; see `completeSaveStep`).
 * @returns the document id
 */
export async function writeSave(input: ActionInput, save: StepSave): Promise<string> {
  const output = {
    tenantId: input.tenantId,
    taskId: input.taskId,
    stepId: input.step.id,
    runId: input.runId,
    title: save.output.title ?? undefined,
    content: save.output.content,
  };
  const docId = await saveTaskOutputDocument(input.deps.db, output, save.doc);
  if (docId) return docId;
  const outputId = await saveTaskOutput(input.deps.db, output);
  const inserted = await insertDocument(input.deps.db, {
    ...save.doc,
    id: `doc_${outputId.slice('out_'.length)}`,
    provenance: { ...save.doc.provenance, task_output_id: outputId },
  });
  return inserted.document.id;
}

async function saveAction(input: ActionInput): Promise<string> {
  return writeSave(input, await prepareSave(input));
}

async function webhookAction(input: ActionInput): Promise<string> {
  const url = required(input.args, 'url', 'webhook');
  const secret = required(input.args, 'secret', 'webhook');
  const res = await postWebhook({
    url,
    secret,
    allowPrivate: input.deps.config.allowPrivateFetch,
    idempotencyKey: `${input.runId}:${input.step.id}`,
    signal: input.signal,
    payload: {
      event: 'task.step',
      task_id: input.taskId,
      step_id: input.step.id,
      run_id: input.runId,
      content: input.args.content ?? input.args.payload ?? null,
      results: Object.fromEntries(input.step.depends_on.map((id) => [id, input.depResults[id] ?? null])),
    },
  });
  return `HTTP ${res.status}${res.body ? `: ${cutText(res.body, 2000)}` : ''}`;
}

const INSTRUCTIONS: Record<
  'research' | 'summarize' | 'compare' | 'draft' | 'generate',
  { lane: string; system: string; subject: string[] }
> = {
  research: {
    lane: 'svc-oracle',
    system: 'You research a topic. Give the key facts, open questions and sources to check, as concise notes.',
    subject: ['topic', 'prompt', 'query'],
  },
  summarize: {
    lane: 'mid',
    system: 'Summarize the material faithfully and concisely. Do not add facts.',
    subject: ['content', 'prompt'],
  },
  compare: {
    lane: 'mid',
    system: 'Compare the items given: the similarities, the differences and a short verdict.',
    subject: ['items', 'content', 'prompt'],
  },
  draft: {
    lane: 'svc-oracle',
    system: 'Write a clear draft of what is asked, using the material given.',
    subject: ['prompt', 'topic', 'content'],
  },
  generate: { lane: 'svc-oracle', system: 'Do what the prompt asks.', subject: ['prompt', 'topic', 'content'] },
};

async function modelAction(action: keyof typeof INSTRUCTIONS, input: ActionInput): Promise<string> {
  const spec = INSTRUCTIONS[action];
  const subject = spec.subject.map((k) => input.args[k]).filter((v): v is string => !!v?.trim());
  const ctx = context(input);
  if (!subject.length && !ctx) {
    throw new StepPermanentError(`The ${action} step needs args.${spec.subject[0]} or a dependency with a result.`);
  }
  const lane = input.args.lane && input.models.hasLane(input.args.lane) ? input.args.lane : spec.lane;
  const maxTokens = Number.parseInt(input.args.max_tokens ?? '', 10);
  const user = [subject.join('\n\n'), ctx ? `Material:\n${ctx}` : ''].filter(Boolean).join('\n\n');
  const result = await input.models.complete({
    lane,
    messages: [
      { role: 'system', content: spec.system },
      { role: 'user', content: user.slice(0, 400_000) },
    ],
    ...(Number.isFinite(maxTokens) && maxTokens > 0 ? { max_tokens: Math.min(maxTokens, 16_000) } : {}),
    signal: input.signal,
    timeoutMs: 110_000,
  });
  return cutText(result.content, MAX_RESULT_CHARS);
}

/** Runs one step's side effect and returns the result text to store. */
export function runAction(action: StepAction, input: ActionInput): Promise<string> {
  switch (action) {
    case 'fetch':
      return fetchAction(input);
    case 'save':
      return saveAction(input);
    case 'webhook':
      return webhookAction(input);
    case 'research':
      return researchAction(input, (note) => modelAction('research', input).then((r) => `${note}\n\n${r}`));
    default:
      return modelAction(action, input);
  }
}
