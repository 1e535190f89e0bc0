import { defineReasoning } from './types';
import {
  workgraphAnswerRequest,
  workgraphAnswerResponse,
  type WorkgraphAnswerRequest,
  type WorkgraphAnswerResponse,
} from '../schema/reasoning/workgraph-answer';
import {
  analyzeWorkgraph,
  downstream,
  iso,
  openUpstream,
  ownerLoad,
  type WorkgraphAnalysis,
} from './lib/workgraph-core';
import { keywordSet } from './lib/text-segments';
import { workgraphCompile } from './workgraph-compile';

type Out = WorkgraphAnswerResponse;
type Kind = Out['question_kind'];

/** Ordered rules: the first pattern that matches decides what the question asks. */
const RULES: [Kind, RegExp][] = [
  ['load', /\b(overload(ed)?|workload|capacity|busiest|too much|load)\b/i],
  ['dependents', /\b(depends? on|downstream|unblocks?|impact(ed|s)?|affected|waiting on it)\b/i],
  ['blockers', /\b(block(s|ed|ing|er|ers)?|waiting (on|for)|holding up|stuck|prerequisites?|depend)\b/i],
  ['late', /\b(late|overdue|behind|slip(ping|s)?|at risk|miss(ed|ing)? (the )?deadline|deadlines?)\b/i],
  ['owner', /\b(who|owner|owns|responsible|assigned|assignee)\b/i],
  ['next', /\b(next|start|ready|pick up|work on|what now|first)\b/i],
  ['critical_path', /\b(critical|longest|bottleneck|finish|when will|complete|done by|eta)\b/i],
];
// "What does X depend on" asks for prerequisites, not dependents.
const ASKS_PREREQS = /\bdoes\b.*\bdepend on\b|\bdepends on what\b/i;

function resolveSubject(a: WorkgraphAnalysis, question: string, subject?: string) {
  const owners = new Map<string, string>();
  for (const it of a.items)
    if (it.owner && !owners.has(it.owner.toLowerCase())) owners.set(it.owner.toLowerCase(), it.owner);
  const lower = new Map<string, number>();
  a.ids.forEach((id, i) => !lower.has(id.toLowerCase()) && lower.set(id.toLowerCase(), i));
  const byToken = (t: string) => a.index.get(t) ?? lower.get(t.toLowerCase());
  if (subject) {
    const i = byToken(subject.trim());
    if (i !== undefined) return { item: i, owner: null, how: 'explicit' as const };
    const o = owners.get(subject.trim().toLowerCase());
    if (o) return { item: undefined, owner: o, how: 'explicit' as const };
  }
  const tokens = question
    .split(/[\s,?!;:()"`]+/)
    .map((t) => t.replace(/['’]s$/i, '').replace(/[.'’]+$/, ''))
    .filter(Boolean);
  for (const t of tokens) {
    const i = byToken(t);
    if (i !== undefined) return { item: i, owner: null, how: 'id' as const };
  }
  for (let k = 0; k < tokens.length; k++) {
    const o =
      owners.get(tokens[k].toLowerCase()) ??
      (k + 1 < tokens.length ? owners.get(`${tokens[k]} ${tokens[k + 1]}`.toLowerCase()) : undefined);
    if (o) return { item: undefined, owner: o, how: 'owner' as const };
  }
  // Title words: inverted index, best overlap covering most of the title.
  const words = new Set(keywordSet(question));
  let best: { i: number; score: number } | undefined;
  a.items.forEach((it, i) => {
    const tw = keywordSet(it.title ?? '');
    if (!tw.length) return;
    const hit = tw.filter((w) => words.has(w)).length;
    const score = hit / tw.length;
    if (hit && score >= 0.5 && (!best || score > best.score)) best = { i, score };
  });
  return best
    ? { item: best.i, owner: null, how: 'title' as const }
    : { item: undefined, owner: null, how: 'none' as const };
}

/**
 * Answer a question about work items by classifying it with ordered text rules, resolving its
 * subject (item id, owner or title words) and reading the answer off the analysed graph:
 * transitive prerequisites, dependents, ready work ranked by slack, lateness, load.
 */
export function answerWorkgraph(input: WorkgraphAnswerRequest, ctx: { surface?: string }): Out {
  const cap = input.preferences?.max_evidence ?? 20;
  const a = analyzeWorkgraph(input.items, {
    now: input.now,
    timezone: input.timezone,
    hoursPerDay: input.preferences?.hours_per_day,
  });
  let kind: Kind = ASKS_PREREQS.test(input.question)
    ? 'blockers'
    : (RULES.find(([, re]) => re.test(input.question))?.[0] ?? 'summary');
  const subj = resolveSubject(a, input.question, input.subject);
  const v = subj.item;
  const name = (i: number) => `${a.ids[i]}${a.items[i].title ? ` (${a.items[i].title})` : ''}`;
  const who = (i: number) => a.items[i].owner ?? 'unassigned';
  const findings: Out['findings'] = [];
  const note = (i: number, detail: string) => findings.length < cap && findings.push({ item_id: a.ids[i], detail });
  let answer = '';
  let confidence =
    subj.how === 'explicit' || subj.how === 'id'
      ? 0.95
      : subj.how === 'title'
        ? 0.75
        : subj.how === 'owner'
          ? 0.9
          : 0.8;
  const readyRank = (list: number[]) =>
    [...list].sort(
      (x, y) =>
        Number(a.critical.has(y)) - Number(a.critical.has(x)) ||
        a.slack[x] - a.slack[y] ||
        (a.items[y].priority ?? 0) - (a.items[x].priority ?? 0) ||
        x - y,
    );

  if ((kind === 'blockers' || kind === 'dependents') && v === undefined) kind = 'summary';
  if (kind === 'blockers' && v !== undefined) {
    const reasons = a.blocked.get(v) ?? [];
    const up = openUpstream(a, v, cap);
    for (const r of reasons)
      if (r.kind !== 'open_dependency') note(v, `${r.kind}${r.refs.length ? `: ${r.refs.join(', ')}` : ''}`);
    for (const u of up)
      note(
        u,
        `${a.items[u].status ?? 'todo'}, owner ${who(u)}${a.dag.succ[u].includes(v) ? ', direct' : ', upstream'}`,
      );
    answer = !a.open[v]
      ? `${name(v)} is already ${a.items[v].status}.`
      : reasons.length
        ? `${name(v)} is blocked by ${reasons.map((r) => (r.kind === 'open_dependency' ? r.refs.join(', ') : `${r.kind.replace('_', ' ')}${r.refs.length ? ` ${r.refs.join(', ')}` : ''}`)).join('; ')}${up.length > 1 ? `; ${up.length} open item(s) upstream in total` : ''}.`
        : `${name(v)} is not blocked: every prerequisite is done, so it can start now.`;
  } else if (kind === 'dependents' && v !== undefined) {
    const down = downstream(a, v, cap);
    for (const d of down) note(d, `${a.dag.pred[d].includes(v) ? 'direct' : 'indirect'} dependent, owner ${who(d)}`);
    answer = down.length
      ? `${down.length}${down.length === cap ? '+' : ''} item(s) wait on ${name(v)}: ${down
          .slice(0, 5)
          .map((d) => a.ids[d])
          .join(', ')}.`
      : `Nothing depends on ${name(v)}.`;
  } else if (kind === 'owner') {
    if (v !== undefined) {
      note(v, `owner ${who(v)}, status ${a.items[v].status ?? 'todo'}`);
      answer = `${name(v)} is owned by ${who(v)}.`;
    } else if (subj.owner) {
      const mine = a.items.flatMap((it, i) => (it.owner === subj.owner && a.open[i] ? [i] : []));
      for (const i of mine) note(i, a.blocked.has(i) ? 'blocked' : 'ready');
      answer = `${subj.owner} owns ${mine.length} open item(s)${
        mine.length
          ? `: ${mine
              .slice(0, 5)
              .map((i) => a.ids[i])
              .join(', ')}`
          : ''
      }.`;
    } else {
      const un = a.items.flatMap((it, i) => (!it.owner && a.open[i] ? [i] : []));
      for (const i of un) note(i, 'no owner');
      answer = `No item or person named; ${un.length} open item(s) have no owner.`;
      confidence = 0.5;
    }
  } else if (kind === 'next') {
    const pool = readyRank(
      a.ready.filter((i) =>
        subj.owner ? a.items[i].owner === subj.owner : v === undefined || i === v || a.dag.pred[v].includes(i),
      ),
    );
    for (const i of pool) note(i, `${a.critical.has(i) ? 'critical path' : `slack ${a.slack[i]}h`}, owner ${who(i)}`);
    answer = pool.length
      ? `Next: ${name(pool[0])}${a.critical.has(pool[0]) ? ', on the critical path' : ''}${
          pool.length > 1
            ? `; then ${pool
                .slice(1, 4)
                .map((i) => a.ids[i])
                .join(', ')}`
            : ''
        }.`
      : 'Nothing is ready: all open work waits on something.';
  } else if (kind === 'late') {
    const late = a.order
      .concat(a.stuck)
      .filter((i) => a.late[i] && (!subj.owner || a.items[i].owner === subj.owner) && (v === undefined || i === v));
    late.sort((x, y) => a.due[x]!.toMillis() - a.due[y]!.toMillis() || x - y);
    for (const i of late)
      note(i, `${a.late[i]}: due ${a.items[i].due}${a.forecast[i] ? `, forecast ${iso(a.forecast[i])}` : ''}`);
    if (!input.now || a.warnings.some((w) => w.startsWith('now'))) {
      answer = 'Lateness needs the current time: send now with the request.';
      confidence = 0.3;
    } else
      answer = late.length
        ? `${late.length} item(s) late or at risk, earliest due first: ${late
            .slice(0, 5)
            .map((i) => `${a.ids[i]} (${a.late[i]})`)
            .join(', ')}.`
        : 'Nothing is overdue or forecast to miss its due date.';
  } else if (kind === 'critical_path') {
    const path = a.cpPath.filter((i) => a.open[i]);
    for (const i of path) note(i, `${a.hours[i]}h, owner ${who(i)}`);
    answer = path.length
      ? `The critical path is ${path.map((i) => a.ids[i]).join(' → ')}: ${a.cpLength}h of remaining work${a.projectFinish ? `, forecast to finish ${iso(a.projectFinish)}` : ''}.`
      : 'No open work remains on any path.';
  } else if (kind === 'load') {
    const load = ownerLoad(a);
    for (const o of load) for (const i of o.item_idx.slice(0, 3)) note(i, `${o.owner}: ${o.open_hours}h open`);
    answer = load.length
      ? `Heaviest load: ${load
          .slice(0, 3)
          .map((o) => `${o.owner} ${o.days_of_work} day(s) (${o.open_items} items)`)
          .join('; ')}.`
      : 'No open work.';
  } else if (v !== undefined) {
    const state = !a.open[v] ? (a.items[v].status ?? 'done') : a.blocked.has(v) ? 'blocked' : 'ready';
    note(v, `${state}, owner ${who(v)}`);
    const when = a.forecast[v] ? `, forecast ${iso(a.forecast[v])}` : '';
    answer = `${name(v)} is ${state}${a.critical.has(v) ? ' and on the critical path' : Number.isNaN(a.slack[v]) ? '' : ` with ${a.slack[v]}h slack`}${when}.`;
  } else {
    const blocked = [...a.blocked.keys()].sort((x, y) => x - y);
    for (const i of blocked) note(i, 'blocked');
    answer = `${a.items.filter((_, i) => a.open[i]).length} open item(s): ${a.ready.length} ready, ${blocked.length} blocked, critical path ${a.cpLength}h.`;
    confidence = Math.min(confidence, 0.6);
  }
  const evidence = [...new Set(findings.map((f) => f.item_id))].slice(0, cap);
  const subjId = v !== undefined ? a.ids[v] : null;
  return {
    surface: ctx.surface ?? input.surface ?? null,
    question_kind: kind,
    subject: { item_id: subjId, owner: v !== undefined ? (a.items[v].owner ?? null) : subj.owner },
    answer,
    findings,
    evidence_node_ids: evidence,
    confidence,
    follow_up_questions: subjId
      ? [`What depends on ${subjId}?`, `What blocks ${subjId}?`]
      : ['What should happen next?', 'What is late?'],
    integration_hints: [
      {
        kind: 'highlight',
        target: 'evidence_node_ids',
        detail: "Highlight these items in the caller's board next to the answer.",
      },
      {
        kind: 'graph',
        target: '/v1/workgraph/compile',
        detail: 'Compile the same items for the full graph behind this answer.',
      },
    ],
  };
}

export const workgraphAnswer = defineReasoning({
  path: '/workgraph/answer',
  summary: 'Answer a question (what blocks, who owns, what next, what is late) from a work graph with evidence ids',
  request: workgraphAnswerRequest,
  response: workgraphAnswerResponse,
  compile: answerWorkgraph,
  example: { ...workgraphCompile.example, question: 'What is blocking e2e?' },
});
