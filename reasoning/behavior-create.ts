import { defineReasoning } from './types';
import {
  behaviorCreateRequest,
  behaviorCreateResponse,
  type BehaviorCreateRequest,
  type BehaviorCreateResponse,
} from '../schema/reasoning/behavior-create';
import { nextOccurrences, parseCadence, toRRule, WEEKDAY_CODES } from './lib/cadence-rules';
import { extractDueHint, resolveDue } from './lib/due-hints';
import { isoOut, parseInstant, resolveZone } from './lib/luxon-time';

/**
 * Behaviour contracts: the cadence text is parsed into a recurrence (RRULE plus concrete next
 * occurrences in the caller's zone), todos and goals get a resolved due date, and the feedback
 * and recovery rules follow the type, stakes and surface.
 */
type Kind = BehaviorCreateResponse['recovery_policy']['kind'];
const TYPE_DEFAULTS: Record<
  BehaviorCreateRequest['type'],
  { freq: 'daily' | 'weekly' | 'once'; reinforcement: string; recovery: Kind }
> = {
  daily: { freq: 'daily', reinforcement: 'streak', recovery: 'grace' },
  habit: { freq: 'daily', reinforcement: 'streak', recovery: 'shrink' },
  todo: { freq: 'once', reinforcement: 'gentle', recovery: 'catch_up' },
  goal: { freq: 'weekly', reinforcement: 'points', recovery: 'catch_up' },
  shared_goal: { freq: 'weekly', reinforcement: 'social', recovery: 'pause' },
};

const level = (s?: string): 'low' | 'medium' | 'high' =>
  /high|serious|money|bet|public|strict/i.test(s ?? '')
    ? 'high'
    : /low|casual|light|none/i.test(s ?? '') || !s
      ? 'low'
      : 'medium';

export function compileBehaviorCreate(input: BehaviorCreateRequest, ctx: { surface?: string }): BehaviorCreateResponse {
  const def = TYPE_DEFAULTS[input.type];
  const zone = resolveZone(input.timezone);
  const now = parseInstant(input.now, zone);
  const text = [input.cadence ?? '', input.type === 'todo' ? input.title : ''].join(' ');
  const cad = parseCadence(input.cadence ?? '', def.freq);
  const assumptions = [...cad.assumptions];
  if (!input.cadence) assumptions.push(`no cadence given: ${def.freq} by default for a ${input.type}`);

  // Dues for todos and goals ("by Friday", "2026-06-01"); recurrence for the rest.
  const hint =
    input.type === 'todo' || input.type === 'goal' || input.type === 'shared_goal' ? extractDueHint(text) : null;
  const due = hint ? resolveDue(hint, now, 'request_now', zone) : null;
  if (hint && !due?.at) assumptions.push(`due "${hint.hint}" is relative and no now was given`);
  const kind =
    input.type === 'todo' ? 'one_off' : input.type === 'goal' || input.type === 'shared_goal' ? 'target' : 'recurring';
  const frequency = input.type === 'todo' && cad.matched.length === 0 ? 'once' : cad.frequency;
  const contractCad = { ...cad, frequency };
  const maxOcc = input.preferences.max_occurrences ?? 5;
  const occ = now ? nextOccurrences(contractCad, now, maxOcc).map(isoOut) : [];
  if (!now && frequency !== 'once') assumptions.push('no now given: next occurrences not listed');
  const periodTarget =
    cad.timesPerPeriod ?? (frequency === 'weekly' && cad.byWeekday.length ? cad.byWeekday.length : 1);

  // Feedback: reinforcement by type unless asked; high stakes make misses visible, low keep it gentle.
  const reinforcement = (input.reinforcement_mode ?? def.reinforcement).toLowerCase();
  const stakes = level(input.stakes);
  const surface = (ctx.surface ?? input.surface ?? 'app').toLowerCase();
  const channel = /mobile|phone|watch/.test(surface)
    ? 'push notification'
    : /chat|assistant/.test(surface)
      ? 'chat check-in'
      : /mail/.test(surface)
        ? 'email digest'
        : 'in-app card';
  const privacy = (input.privacy ?? (input.type === 'shared_goal' ? 'shared' : 'private')).toLowerCase();
  const participants = input.type === 'shared_goal' ? [...new Set(input.participants ?? [])] : [];
  const signals = [
    'completion check-off',
    ...(cad.durationMinutes ? [`${cad.durationMinutes}-minute timer completed`] : []),
    ...(reinforcement === 'streak' ? ['streak length'] : reinforcement === 'points' ? ['points per completion'] : []),
    ...(participants.length ? ['partner completions'] : []),
  ];
  const recoveryKind =
    (['grace', 'catch_up', 'pause', 'shrink', 'reset'] as Kind[]).find((k) =>
      (input.recovery_policy ?? '').toLowerCase().replace(/[\s-]/g, '_').includes(k),
    ) ?? def.recovery;
  const grace = recoveryKind === 'reset' ? 0 : stakes === 'high' ? 1 : 2;
  const rules: Record<Kind, string[]> = {
    grace: [
      `up to ${grace} missed occurrence(s) per period keep the streak`,
      'a third miss pauses the streak instead of zeroing it',
    ],
    catch_up: [
      'a missed occurrence can be made up before the next one',
      'the due date moves only on an explicit decision',
    ],
    pause: [
      'after two misses the behaviour pauses and asks whether to continue',
      participants.length ? 'partners are told it is paused, not why' : 'pausing never counts as failure',
    ],
    shrink: [
      'after a miss the next occurrence is halved (the two-minute version)',
      'full size returns after two completions in a row',
    ],
    reset: ['a miss resets the streak to zero', 'history is kept for review'],
  };

  return {
    temporal_contract: {
      kind,
      frequency,
      interval: cad.interval,
      by_weekday: cad.byWeekday.map((d) => WEEKDAY_CODES[d]),
      times_per_period: cad.timesPerPeriod,
      period: cad.period,
      times_of_day: cad.times,
      duration_minutes: cad.durationMinutes,
      rrule: toRRule(contractCad),
      due: due ? { hint: due.hint, at: due.at } : null,
      next_occurrences: occ,
      matched_phrases: cad.matched,
      assumptions,
    },
    feedback_model: {
      surface,
      channel,
      reinforcement,
      signals,
      reward:
        reinforcement === 'streak'
          ? 'streak counter grows; milestone badge at 7, 30, 100'
          : reinforcement === 'points'
            ? 'points per completion, bonus when the period target is met'
            : reinforcement === 'social'
              ? 'partners see completions and can cheer'
              : 'a short acknowledgement, no score',
      tone: stakes === 'high' ? 'direct' : stakes === 'medium' ? 'encouraging' : 'gentle',
      streak_visible: reinforcement === 'streak',
      nudge_policy:
        stakes === 'high'
          ? 'nudge at the occurrence and once 2 hours later'
          : 'one nudge at the occurrence, none after a miss',
    },
    initial_state: {
      status: occ.length || due?.at ? 'active' : 'not_started',
      streak: 0,
      completions: 0,
      period_target: periodTarget,
      period_progress: 0,
      next_due_at: occ[0] ?? due?.at ?? null,
      privacy,
      participants,
      stakes,
    },
    recovery_policy: { kind: recoveryKind, grace_periods: grace, rules: rules[recoveryKind] },
    integration_hints: [
      ...(toRRule(contractCad)
        ? [
            {
              kind: 'calendar',
              target: 'calendar',
              detail: `RRULE:${toRRule(contractCad)}${zone ? ` (TZID=${zone})` : ''}`,
            },
          ]
        : []),
      ...(due?.at ? [{ kind: 'task', target: 'tasks', detail: `task "${input.title}" due ${due.at}` }] : []),
      { kind: 'notification', target: channel, detail: `${reinforcement} feedback on ${surface}` },
      ...(participants.length
        ? [
            {
              kind: 'share',
              target: 'spaces',
              detail: `share progress with ${participants.length} participant(s) (${privacy})`,
            },
          ]
        : []),
    ],
  };
}

export const behaviorCreate = defineReasoning({
  path: '/behavior/create',
  summary:
    'Compile a behaviour (daily, habit, todo, goal, shared goal) into a temporal contract, feedback model, state and recovery policy.',
  request: behaviorCreateRequest,
  response: behaviorCreateResponse,
  compile: compileBehaviorCreate,
  example: {
    type: 'habit',
    title: 'Stretch before work',
    cadence: 'every weekday at 7:15am for 10 minutes',
    surface: 'mobile',
    reinforcement_mode: 'streak',
    stakes: 'medium',
    recovery_policy: 'grace day',
    privacy: 'private',
    now: '2026-03-27T20:00:00',
    timezone: 'Europe/Berlin',
  },
});
