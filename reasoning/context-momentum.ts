import { defineReasoning } from './types';
import {
  contextMomentumRequest,
  contextMomentumResponse,
  type ContextMomentumRequest,
  type ContextMomentumResponse,
} from '../schema/reasoning/context-momentum';
import { energyFit, estimateMinutes, normalizeEnergy } from './lib/effort-minutes';
import { clip, keywordSet } from './lib/text-segments';

/**
 * Momentum: every item gets a status class, an effort estimate and a score from explicit
 * factors (current project, already in progress, energy fit, fits the time available, novelty);
 * buckets, packets per project and the 5- and 30-minute moves all come from that one ranking.
 */
type Item = ContextMomentumRequest['items'][number];
type Cls = 'done' | 'blocked' | 'in_progress' | 'open';
const classify = (s?: string): Cls =>
  /done|complete|archiv|closed|cancel/i.test(s ?? '')
    ? 'done'
    : /block|wait|stuck|hold/i.test(s ?? '')
      ? 'blocked'
      : /progress|active|doing|start|wip/i.test(s ?? '')
        ? 'in_progress'
        : 'open';
const NOVEL = /^(idea|spark|inspiration|link|bookmark|thought|question)/i;
const LEVEL = { low: 0, medium: 1, high: 2 } as const;

interface Scored {
  item: Item;
  cls: Cls;
  minutes: number;
  fit: 'low' | 'medium' | 'high';
  onProject: boolean;
  score: number;
  order: number;
}

export function compileContextMomentum(
  input: ContextMomentumRequest,
  _ctx: { surface?: string },
): ContextMomentumResponse {
  const available = input.available_minutes ?? 30;
  const energy = normalizeEnergy(input.user_state.energy);
  const sensitive = input.preferences.overwhelm_sensitive === true;
  const novelty = input.preferences.preserve_novelty === true;
  const maxPackets = Math.min(input.preferences.max_packets ?? 3, sensitive ? 2 : 100);
  const project = (input.current_project ?? '').trim().toLowerCase();
  const projectWords = new Set(keywordSet(project));

  const seen = new Set<string>();
  const scored: Scored[] = [];
  input.items.forEach((item, order) => {
    if (seen.has(item.id)) return; // first item with an id wins
    seen.add(item.id);
    const cls = classify(item.status);
    const minutes = estimateMinutes(`${item.title} ${item.content ?? ''}`.slice(0, 2000), {
      min: 5,
      max: 120,
      base: 10,
    });
    const fit = energyFit(`${item.title} ${item.kind ?? ''}`, minutes);
    const hint = (item.project_hint ?? '').toLowerCase();
    const onProject =
      !!project &&
      (hint === project ||
        (item.tags ?? []).some((t) => t.toLowerCase() === project) ||
        (!!hint && keywordSet(hint).some((w) => projectWords.has(w))));
    const score =
      (onProject ? 3 : 0) +
      (cls === 'in_progress' ? 2 : 0) +
      (LEVEL[fit] <= LEVEL[energy] ? 1 : -1) +
      (minutes <= available ? 1 : 0) +
      (novelty && NOVEL.test(item.kind ?? '') ? 1.5 : 0) +
      (cls === 'blocked' ? -3 : 0);
    scored.push({ item, cls, minutes, fit, onProject, score: Math.round(score * 100) / 100, order });
  });
  const ranked = scored
    .filter((s) => s.cls !== 'done')
    .sort((a, b) => b.score - a.score || a.minutes - b.minutes || a.order - b.order);

  const buckets: ContextMomentumResponse['actionability_buckets'] = {
    ready_now: [],
    needs_more_time: [],
    needs_more_energy: [],
    blocked: [],
    parked: [],
    done: [],
  };
  for (const s of scored) if (s.cls === 'done') buckets.done.push(s.item.id);
  for (const s of ranked) {
    if (s.cls === 'blocked') buckets.blocked.push(s.item.id);
    else if (project && !s.onProject && s.cls !== 'in_progress') buckets.parked.push(s.item.id);
    else if (LEVEL[s.fit] > LEVEL[energy]) buckets.needs_more_energy.push(s.item.id);
    else if (s.minutes > available) buckets.needs_more_time.push(s.item.id);
    else buckets.ready_now.push(s.item.id);
  }

  // Packets: one per project, holding its best items, so a future self can resume in one read.
  const groups = new Map<string, Scored[]>();
  for (const s of ranked) {
    if (s.cls === 'blocked') continue;
    const key = s.item.project_hint?.trim() || (s.onProject ? input.current_project! : 'unassigned');
    const g = groups.get(key);
    if (g) {
      if (g.length < 5) g.push(s);
    } else groups.set(key, [s]);
  }
  const packets = [...groups.entries()]
    .map(([name, g]) => ({ name, g, score: g[0].score + 0.1 * g.length }))
    .sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, maxPackets)
    .map((p, k) => {
      const lead = p.g.find((s) => s.cls === 'in_progress') ?? p.g[0];
      return {
        id: `packet-${k + 1}`,
        project: p.name,
        item_ids: p.g.map((s) => s.item.id),
        resume_cue: `${lead.cls === 'in_progress' ? 'Pick up where you left off' : 'Start with'}: ${clip(lead.item.title, 100)}${lead.item.content ? ` — ${clip(lead.item.content, 120)}` : ''}`,
        why_it_matters: p.g[0].onProject
          ? 'part of the current project'
          : lead.cls === 'in_progress'
            ? 'already in motion; re-entry is cheap'
            : 'highest-scoring open loop outside the current project',
        estimated_minutes: p.g.reduce((a, s) => a + s.minutes, 0),
        score: p.score,
      };
    });

  // Moves: the best item that fits each time box (never longer than what is available).
  const pick = (box: number) => {
    const limit = Math.min(box, available);
    if (limit < 1) return null;
    const ready = ranked.filter((s) => s.cls !== 'blocked' && LEVEL[s.fit] <= LEVEL[energy] + 1);
    const fits = ready.find((s) => s.minutes <= limit);
    const s = fits ?? ready[0];
    if (!s) return null;
    const action = fits
      ? `${s.cls === 'in_progress' ? 'Continue' : 'Do'}: ${clip(s.item.title, 100)}`
      : `Open "${clip(s.item.title, 80)}" and write down the very next sub-step`;
    return { item_id: s.item.id, action, minutes: fits ? s.minutes : limit, score: s.score };
  };
  const five = pick(5);
  let thirty = pick(30);
  if (thirty && five && thirty.item_id === five.item_id) {
    const alt = ranked.find(
      (s) => s.cls !== 'blocked' && s.item.id !== five.item_id && s.minutes <= Math.min(30, available),
    );
    if (alt)
      thirty = {
        item_id: alt.item.id,
        action: `${alt.cls === 'in_progress' ? 'Continue' : 'Do'}: ${clip(alt.item.title, 100)}`,
        minutes: alt.minutes,
        score: alt.score,
      };
  }

  // Stepping stone: keep one in-motion (or, with preserve_novelty, one fresh) item warm.
  const used = new Set([five?.item_id, thirty?.item_id]);
  const stone =
    (novelty
      ? ranked.find((s) => !used.has(s.item.id) && NOVEL.test(s.item.kind ?? '') && s.cls !== 'blocked')
      : undefined) ??
    ranked.find((s) => !used.has(s.item.id) && s.cls === 'in_progress') ??
    ranked.find((s) => !used.has(s.item.id) && s.cls !== 'blocked');

  return {
    actionability_buckets: buckets,
    future_self_packets: packets,
    next_moves: { five_minute: five, thirty_minute: thirty },
    preserved_stepping_stone: stone
      ? {
          item_id: stone.item.id,
          reason:
            NOVEL.test(stone.item.kind ?? '') && novelty
              ? 'a fresh idea worth keeping alive'
              : stone.cls === 'in_progress'
                ? 'in motion, not chosen for now: leave a note so it stays cheap to resume'
                : 'next in line after the current moves',
          note: `Next time: ${clip(stone.item.title, 100)}`,
        }
      : null,
    memory_seeds: [
      ...(project
        ? [
            {
              key: 'current_project',
              value: input.current_project!,
              item_ids: scored
                .filter((s) => s.onProject)
                .slice(0, 20)
                .map((s) => s.item.id),
            },
          ]
        : []),
      {
        key: 'energy_state',
        value: `${energy}${input.user_state.mood ? `, ${input.user_state.mood}` : ''}${input.user_state.mode ? ` (${input.user_state.mode})` : ''} with ${available} minutes`,
        item_ids: [],
      },
      ...(buckets.blocked.length
        ? [
            {
              key: 'blocked_loops',
              value: `${buckets.blocked.length} item(s) waiting on something`,
              item_ids: buckets.blocked.slice(0, 20),
            },
          ]
        : []),
    ],
    integration_hints: [
      {
        kind: 'focus_timer',
        target: 'timer',
        detail: five ? `start a 5-minute timer on ${five.item_id}` : 'no time available now',
      },
      { kind: 'resume_card', target: input.surface ?? 'home', detail: `show ${packets.length} packet(s) on next open` },
      ...(buckets.blocked.length
        ? [
            {
              kind: 'follow_up',
              target: 'tasks',
              detail: `ask about blockers of ${buckets.blocked.slice(0, 3).join(', ')}`,
            },
          ]
        : []),
    ],
  };
}

export const contextMomentum = defineReasoning({
  path: '/context/momentum',
  summary: 'Rank open loops into actionability buckets, future-self packets and the next 5- and 30-minute moves.',
  request: contextMomentumRequest,
  response: contextMomentumResponse,
  compile: compileContextMomentum,
  example: {
    surface: 'home',
    current_project: 'Garden shed',
    available_minutes: 25,
    user_state: { energy: 'low', mood: 'scattered', mode: 'evening' },
    preferences: { max_packets: 2, overwhelm_sensitive: false, preserve_novelty: true },
    items: [
      {
        id: 'i1',
        title: 'Order roof felt',
        kind: 'task',
        project_hint: 'Garden shed',
        status: 'open',
        content: 'Compare two suppliers, 10 min',
      },
      {
        id: 'i2',
        title: 'Draft the shed floor plan',
        kind: 'task',
        project_hint: 'Garden shed',
        status: 'in_progress',
        content: 'Need dimensions for the door and the window, then a full drawing with measurements (2 hours)',
      },
      {
        id: 'i3',
        title: 'Reply to Sam about the quote',
        kind: 'message',
        project_hint: 'Garden shed',
        status: 'waiting',
      },
      { id: 'i4', title: 'Solar lights idea for the path', kind: 'idea', project_hint: 'Garden', status: 'open' },
      { id: 'i5', title: 'File tax receipts', kind: 'task', project_hint: 'Admin', status: 'open', content: '15 min' },
      { id: 'i6', title: 'Buy screws', kind: 'task', project_hint: 'Garden shed', status: 'done' },
    ],
  },
});
