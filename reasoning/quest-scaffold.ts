import { defineReasoning } from './types';
import {
  questScaffoldRequest,
  questScaffoldResponse,
  type QuestScaffoldRequest,
  type QuestScaffoldResponse,
} from '../schema/reasoning/quest-scaffold';
import { clip, keywordSet, splitSentences } from './lib/text-segments';
import { energyFit, estimateMinutes, explicitMinutes, normalizeEnergy } from './lib/effort-minutes';
import { parseInstant, resolveZone, isoOut } from './lib/luxon-time';

/**
 * Quest scaffolding: notes become concrete steps (bullets, numbered lines and imperative
 * sentences; headings become milestones), steps longer than the preferred length are split,
 * only `maxVisibleSteps` are shown, and the rhythm follows energy and the stated constraints.
 */
const BULLET = /^\s*(?:[-*•+]|\d+[.)]|\[[ x]\])\s+/;
const HEADING = /^\s*(?:#{1,6}\s+.+|[^.!?]{2,60}:)\s*$/;
const IMPERATIVE =
  /^(?:to\s+)?(write|draft|read|review|outline|research|list|call|email|send|book|buy|build|set up|setup|install|plan|practice|practise|run|train|study|collect|gather|clean|sort|fix|test|ship|publish|finish|start|create|design|sketch|ask|schedule|pick|choose|decide|find|learn|prepare|update|edit|record|measure|track|submit|file|apply|interview|compare|try)\b/i;
const ROLES: [RegExp, string][] = [
  [/\b(write|draft|essay|thesis|novel|book|blog|article)\b/i, 'Author'],
  [/\b(learn|study|exam|course|language)\b/i, 'Apprentice'],
  [/\b(build|app|code|ship|prototype|launch)\b/i, 'Builder'],
  [/\b(run|marathon|train|fitness|gym|race)\b/i, 'Athlete'],
  [/\b(clean|declutter|organi[sz]e|tidy|move)\b/i, 'Curator'],
  [/\b(save|budget|money|debt|invest)\b/i, 'Steward'],
  [/\b(job|career|apply|interview|hire)\b/i, 'Candidate'],
];

interface Step {
  id: string;
  title: string;
  minutes: number;
  milestone: number;
  energy: 'low' | 'medium' | 'high';
}

function titleCase(words: string[]): string {
  return words.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join(' ');
}

export function compileQuestScaffold(input: QuestScaffoldRequest, _ctx: { surface?: string }): QuestScaffoldResponse {
  const prefs = input.preferences;
  const energy = normalizeEnergy(prefs.energy);
  const sensitive = prefs.overwhelmSensitive === true;
  const stepMins = Math.min(prefs.preferredStepMins ?? 25, energy === 'low' ? 15 : 240);
  const maxVisible = Math.min(prefs.maxVisibleSteps ?? 5, sensitive ? 3 : 50);

  // 1. Raw steps and milestone headings from the notes.
  const milestones: string[] = [];
  const raw: { text: string; milestone: number }[] = [];
  for (const line of (input.notes ?? '').split(/\r?\n/)) {
    const t = line.trim();
    if (!t) continue;
    if (!BULLET.test(t) && HEADING.test(t)) {
      milestones.push(clip(t.replace(/^#+\s*/, '').replace(/:\s*$/, ''), 80));
      continue;
    }
    const mIdx = Math.max(0, milestones.length - 1);
    if (BULLET.test(t)) raw.push({ text: t.replace(BULLET, ''), milestone: mIdx });
    else
      for (const s of splitSentences(t))
        if (IMPERATIVE.test(s) || /\b(need to|have to|must|should|todo)\b/i.test(s))
          raw.push({ text: s.replace(/^(i|we)\s+(need to|have to|must|should)\s+/i, ''), milestone: mIdx });
  }
  const goalWords = keywordSet(input.goal);
  if (!raw.length) {
    // Nothing concrete in the notes: derive a minimal path from the goal itself.
    const obj = clip(input.goal, 80);
    for (const t of [
      `Write down what "done" means for: ${obj}`,
      `Gather what you need for: ${obj}`,
      `Do a first rough pass at: ${obj}`,
      `Review the rough pass and fix the biggest gap`,
      `Finish and mark the quest complete`,
    ])
      raw.push({ text: t, milestone: 0 });
  }
  if (!milestones.length) milestones.push('Main path');

  // 2. Split long steps into parts of about the preferred length.
  const steps: Step[] = [];
  for (const r of raw) {
    const total = estimateMinutes(r.text, { min: 5, max: 90 });
    const parts = Math.min(8, Math.max(1, Math.ceil(total / stepMins)));
    const each = Math.max(1, Math.round(total / parts));
    const title = clip(
      r.text.replace(/\s*\(?\d+(?:\.\d+)?\s*(?:minutes?|mins?|hours?|hrs?|h)\)?/i, '').trim() || r.text,
      140,
    );
    for (let p = 1; p <= parts; p++)
      steps.push({
        id: `step-${steps.length + 1}`,
        title: parts > 1 ? `${title} (part ${p}/${parts})` : title,
        minutes: each,
        milestone: r.milestone,
        energy: energyFit(r.text, each),
      });
  }
  // Without explicit headings, cut milestones by cumulative effort (~90 minutes each, at most 6).
  if (milestones.length === 1 && steps.length > 3) {
    const total = steps.reduce((a, s) => a + s.minutes, 0);
    const count = Math.min(6, Math.max(1, Math.ceil(total / 90)), steps.length);
    let acc = 0;
    for (const s of steps) {
      s.milestone = Math.min(count - 1, Math.floor((acc / total) * count));
      acc += s.minutes;
    }
    milestones.length = 0;
    for (let k = 0; k < count; k++) milestones.push(count === 1 ? 'Main path' : `Stage ${k + 1}`);
  }

  // 3. First action: with low energy or overwhelm, a heavy opening step yields to the next
  // lighter step among the first three (never a continuation part).
  let first = steps[0];
  if ((energy === 'low' || sensitive) && first.energy === 'high')
    first = steps.slice(1, 3).find((s) => s.energy !== 'high' && !/\(part [2-9]\/\d\)$/.test(s.title)) ?? first;
  const startMins = Math.min(first.minutes, sensitive || energy === 'low' ? 5 : 10);
  const order = [first, ...steps.filter((s) => s !== first)];
  const visible = order.slice(0, maxVisible);
  const visibleIds = new Set(visible.map((s) => s.id));

  // 4. Rhythm from constraints and energy.
  const cons = input.constraints.join(' . ').toLowerCase();
  const rationale: string[] = [];
  let daily = energy === 'low' ? 30 : energy === 'high' ? 90 : 60;
  const capMatch = /(\d+(?:\.\d+)?\s*(?:minutes?|mins?|hours?|hrs?|h))\s*(?:per|a|each|\/)\s*day/.exec(cons);
  if (capMatch) {
    daily = explicitMinutes(capMatch[1]) ?? daily;
    rationale.push(`daily time capped at ${daily} minutes by a constraint`);
  } else rationale.push(`${energy} energy suggests about ${daily} minutes a day`);
  const sessionMinutes = Math.max(1, Math.min(stepMins, daily));
  const sessions = Math.max(1, Math.min(sensitive ? 2 : 4, Math.floor(daily / sessionMinutes)));
  let days = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
  if (/no weekends?|weekdays only|weekdays/.test(cons)) {
    days = days.slice(0, 5);
    rationale.push('weekends kept free');
  } else if (/weekends? only/.test(cons)) days = ['sat', 'sun'];
  const timeOfDay = /morning/.test(cons)
    ? 'morning'
    : /evening|after work/.test(cons)
      ? 'evening'
      : energy === 'high'
        ? 'morning'
        : 'whenever energy peaks';
  if (sensitive) rationale.push('overwhelm-sensitive: at most 3 steps visible and short sessions');

  const totalMinutes = steps.reduce((a, s) => a + s.minutes, 0);
  const perWeek = sessions * sessionMinutes * days.length;
  const estimatedDays = Math.max(1, Math.ceil((totalMinutes / Math.max(1, perWeek)) * 7));
  const mIds = milestones.map((_, k) => `ms-${k + 1}`);
  const msOut = milestones.map((title, k) => {
    const own = steps.filter((s) => s.milestone === k);
    return {
      id: mIds[k],
      title,
      order: k + 1,
      step_count: own.length,
      minutes: own.reduce((a, s) => a + s.minutes, 0),
      visible_step_ids: own.filter((s) => visibleIds.has(s.id)).map((s) => s.id),
    };
  });

  // 5. Reviews: a daily check, a review when each milestone is expected to finish, weekly reviews.
  const zone = resolveZone(input.timezone);
  const now = parseInstant(input.now, zone);
  const at = (d: number) => (now ? isoOut(now.plus({ days: d })) : null);
  const review: QuestScaffoldResponse['review_schedule'] = [
    { kind: 'daily_check', day_offset: 1, at: at(1), milestone_id: null },
  ];
  let acc = 0;
  msOut.forEach((m) => {
    acc += m.minutes;
    if (m.step_count) {
      const d = Math.max(1, Math.ceil((acc / Math.max(1, perWeek)) * 7));
      review.push({ kind: 'milestone_review', day_offset: d, at: at(d), milestone_id: m.id });
    }
  });
  for (let w = 7; w <= Math.min(estimatedDays, 84); w += 7)
    review.push({ kind: 'weekly_review', day_offset: w, at: at(w), milestone_id: null });
  review.sort((a, b) => a.day_offset - b.day_offset || a.kind.localeCompare(b.kind));

  const role = ROLES.find(([re]) => re.test(input.goal))?.[1] ?? 'Pathfinder';
  const nameWords = goalWords.filter((w) => !IMPERATIVE.test(w)).slice(-2);
  const name = `${titleCase(nameWords.length ? nameWords : ['Next', 'Step'])} Quest`;
  const stepOut = (s: Step) => ({
    id: s.id,
    title: s.title,
    minutes: s.minutes,
    milestone_id: mIds[s.milestone],
    energy_fit: s.energy,
  });

  return {
    named_quest: {
      name,
      goal: input.goal,
      tagline: `${steps.length} steps across ${milestones.length} milestone${milestones.length > 1 ? 's' : ''}, about ${totalMinutes} minutes in total`,
    },
    role_identity: {
      role,
      statement: `You are the ${role} of this quest: every session is a small, finished move toward "${clip(input.goal, 80)}".`,
    },
    first_action: { step_id: first.id, text: `Spend ${startMins} minutes on: ${first.title}`, minutes: startMins },
    visible_steps: visible.map(stepOut),
    hidden_step_count: steps.length - visible.length,
    milestones: msOut,
    daily_rhythm: {
      sessions_per_day: sessions,
      session_minutes: sessionMinutes,
      daily_minutes: Math.min(daily, sessions * sessionMinutes),
      days,
      time_of_day: timeOfDay,
      rationale,
    },
    workspace_sections: [
      {
        id: 'now',
        title: 'Now',
        purpose: 'The only steps in view',
        step_ids: visible.map((s) => s.id),
        item_count: visible.length,
      },
      {
        id: 'later',
        title: 'Later',
        purpose: 'Steps kept out of sight until the current ones are done',
        step_ids: [],
        item_count: steps.length - visible.length,
      },
      {
        id: 'constraints',
        title: 'Ground rules',
        purpose: 'Constraints the plan respects',
        step_ids: [],
        item_count: input.constraints.length,
      },
      { id: 'wins', title: 'Done', purpose: 'Finished steps, for momentum', step_ids: [], item_count: 0 },
    ],
    progress_model: {
      unit: 'step',
      total_steps: steps.length,
      total_minutes: totalMinutes,
      estimated_days: estimatedDays,
      milestone_weights: msOut.map((m) => ({
        milestone_id: m.id,
        weight: Math.round((m.minutes / Math.max(1, totalMinutes)) * 1000) / 1000,
      })),
      completion_rule: 'a milestone completes when all its steps are done; progress is minutes done / total minutes',
    },
    review_schedule: review,
    memory_seeds: [
      { key: 'quest_goal', value: input.goal, kind: 'goal' },
      { key: 'quest_role', value: role, kind: 'identity' },
      { key: 'preferred_step_minutes', value: String(stepMins), kind: 'preference' },
      ...(sensitive ? [{ key: 'overwhelm_sensitive', value: 'true', kind: 'preference' }] : []),
      ...input.constraints.slice(0, 10).map((c, k) => ({ key: `constraint_${k + 1}`, value: c, kind: 'constraint' })),
    ],
    integration_hints: [
      {
        kind: 'task_list',
        target: 'tasks',
        detail: `create tasks only for the ${visible.length} visible steps; reveal the next step when one is completed`,
      },
      {
        kind: 'calendar',
        target: 'calendar',
        detail: `${sessions} × ${sessionMinutes}-minute sessions on ${days.join(', ')} (${timeOfDay})`,
      },
      {
        kind: 'reminder',
        target: 'notifications',
        detail: `daily check on day 1, then the review schedule; first action: ${first.id}`,
      },
    ],
  };
}

export const questScaffold = defineReasoning({
  path: '/quest/scaffold',
  summary: 'Turn a goal and notes into a named quest with a capped set of visible steps, milestones and a rhythm.',
  request: questScaffoldRequest,
  response: questScaffoldResponse,
  compile: compileQuestScaffold,
  example: {
    goal: 'Write the first draft of my thesis introduction',
    notes:
      'Research:\n- Collect the five key papers (20 min)\n- Skim each paper and note its main claim\nWriting:\n- Outline the introduction in bullet points\n- Draft the motivation section (90 min)\n- Email the draft to my supervisor\nI need to book a meeting with the supervisor.',
    surface: 'home',
    constraints: ['max 45 minutes per day', 'no weekends'],
    preferences: { maxVisibleSteps: 4, preferredStepMins: 25, energy: 'low', overwhelmSensitive: false },
    now: '2026-05-04T09:00:00',
    timezone: 'Europe/Paris',
  },
});
