import { SURFACES, type Surface } from '../schema/surfaces';

/**
 * Surfaces, profiles, built-in skills and modules as data: the chat gateway reads this one
 * registry instead of branching on surface names. A surface changes vocabulary and behaviour,
 * never identity. `sass` is the surface baseline (0 = plain, 1 = sharp wit); a profile nudges it.
 */
export interface ProfileDef {
  title: string;
  guidance: string;
  sassDelta: number;
}

export interface SurfaceDef {
  title: string;
  guidance: string;
  sass: number;
  profiles: Record<string, ProfileDef>;
}

export interface SkillDef {
  title: string;
  description: string;
  instructions: string;
  /** Surfaces the skill is allowed on; `'*'` also allows it without a surface. */
  surfaces: readonly Surface[] | '*';
}

export interface ModuleDef {
  title: string;
  description: string;
  surfaces: readonly Surface[] | '*';
}

/** No X-Svc-Context (or an invalid one): the neutral baseline. */
export const BASELINE = {
  title: 'Default',
  guidance: 'General assistance. Clear, direct, helpful.',
  sass: 0.3,
} as const;

export const SURFACE_REGISTRY: Record<Surface, SurfaceDef> = {
  studio: {
    title: 'Studio',
    guidance:
      'Creative production work: scripts, visuals, storyboards, edits. Use production vocabulary (takes, beats, cuts, drafts).',
    sass: 0.45,
    profiles: {
      director: {
        title: 'Director',
        guidance: 'Think in scenes and intent; give decisive creative direction.',
        sassDelta: 0.1,
      },
      editor: { title: 'Editor', guidance: 'Tighten and cut; propose concrete line edits.', sassDelta: 0 },
      muse: { title: 'Muse', guidance: 'Generate many divergent ideas before converging.', sassDelta: 0.15 },
    },
  },
  home: {
    title: 'Home',
    guidance: 'Everyday life: plans, errands, household, wellbeing. Warm, practical, brief.',
    sass: 0.35,
    profiles: {
      companion: {
        title: 'Companion',
        guidance: 'Conversational and supportive; ask one question at a time.',
        sassDelta: 0.05,
      },
      planner: { title: 'Planner', guidance: 'Turn intentions into dated, small next steps.', sassDelta: -0.1 },
      coach: { title: 'Coach', guidance: 'Encourage follow-through; name the smallest next action.', sassDelta: 0.1 },
    },
  },
  dev: {
    title: 'Dev',
    guidance:
      'Software engineering: code, debugging, architecture, tooling. Precise and technical; code blocks with languages.',
    sass: 0.3,
    profiles: {
      pair: {
        title: 'Pair programmer',
        guidance: 'Work step by step with the user; small diffs, run-and-check loops.',
        sassDelta: 0,
      },
      reviewer: {
        title: 'Reviewer',
        guidance: 'Review for correctness, security and clarity; rank findings by severity.',
        sassDelta: 0.15,
      },
      architect: {
        title: 'Architect',
        guidance: 'Weigh trade-offs; name constraints, options and a recommendation.',
        sassDelta: -0.05,
      },
    },
  },
  red: {
    title: 'Red',
    guidance:
      'Adversarial review: find weaknesses in plans, arguments and systems, then propose fixes. Candid, never cruel.',
    sass: 0.7,
    profiles: {
      critic: { title: 'Critic', guidance: 'Steelman, then attack the weakest assumptions first.', sassDelta: 0.1 },
      auditor: {
        title: 'Auditor',
        guidance: 'Methodical: checklist findings with evidence and severity.',
        sassDelta: -0.2,
      },
    },
  },
  learn: {
    title: 'Learn',
    guidance: 'Learning and study: explain, check understanding, build recall. Patient and encouraging.',
    sass: 0.2,
    profiles: {
      tutor: { title: 'Tutor', guidance: 'Socratic: ask before telling; adapt to the answers.', sassDelta: 0 },
      examiner: { title: 'Examiner', guidance: 'Quiz with graded questions; explain each mistake.', sassDelta: 0.05 },
    },
  },
};

export const SKILL_REGISTRY: Record<string, SkillDef> = {
  summarize: {
    title: 'Summarize',
    description: 'Lead with a short summary, then the details.',
    instructions: 'Start every answer with a two-sentence summary.',
    surfaces: '*',
  },
  concise: {
    title: 'Concise',
    description: 'Shortest complete answer.',
    instructions: 'Answer in as few words as fully answer the question.',
    surfaces: '*',
  },
  code_review: {
    title: 'Code review',
    description: 'Structured review of code.',
    instructions: 'Review code as findings: severity, location, problem, fix.',
    surfaces: ['dev', 'red'],
  },
  debug: {
    title: 'Debug',
    description: 'Hypothesis-driven debugging.',
    instructions: 'List hypotheses by likelihood, with the cheapest check for each.',
    surfaces: ['dev'],
  },
  storyboard: {
    title: 'Storyboard',
    description: 'Shot-by-shot breakdowns.',
    instructions: 'Present visual ideas as numbered shots: framing, action, duration.',
    surfaces: ['studio'],
  },
  brainstorm: {
    title: 'Brainstorm',
    description: 'Many divergent ideas.',
    instructions: 'Offer at least five distinct options before recommending one.',
    surfaces: ['studio', 'home', 'dev', 'learn'],
  },
  meal_plan: {
    title: 'Meal plan',
    description: 'Meals and shopping lists.',
    instructions: 'Give meals with a consolidated shopping list.',
    surfaces: ['home'],
  },
  threat_model: {
    title: 'Threat model',
    description: 'STRIDE-style threat analysis.',
    instructions: 'Enumerate assets, threats (STRIDE), likelihood, impact and mitigations.',
    surfaces: ['red', 'dev'],
  },
  socratic: {
    title: 'Socratic',
    description: 'Teach by questions.',
    instructions: 'Guide with questions; reveal answers only after an attempt.',
    surfaces: ['learn'],
  },
  flashcards: {
    title: 'Flashcards',
    description: 'Recall cards from the material.',
    instructions: 'End with three Q/A flashcards covering the key points.',
    surfaces: ['learn', 'home'],
  },
};

export const MODULE_REGISTRY: Record<string, ModuleDef> = {
  sessions: { title: 'Sessions', description: 'Server-side conversation history with X-Session-ID.', surfaces: '*' },
  feedback: { title: 'Feedback', description: 'Sass and lesson feedback that tunes later answers.', surfaces: '*' },
  custom_skills: { title: 'Custom skills', description: 'Inline user skills in svc_skills.custom.', surfaces: '*' },
  temporal_context: { title: 'Temporal context', description: 'Local time from X-Timezone.', surfaces: '*' },
  environment_hints: {
    title: 'Environment hints',
    description: 'X-Env-OS, X-Env-PWD, X-Env-Project, X-Env-Shell reach the prompt.',
    surfaces: ['dev'],
  },
  commons_tools: {
    title: 'Commons tools',
    description: 'Bounded utility tools on /v1/slm/commons/completions.',
    surfaces: '*',
  },
};

export function surfacesOf(allowed: readonly Surface[] | '*'): string[] {
  return allowed === '*' ? ['*', ...SURFACES] : [...allowed];
}

/** The profile, when it exists on that surface (otherwise the request falls back to the surface baseline). */
export function profileFor(
  surface: Surface | undefined,
  profile: string | null | undefined,
): { id: string; def: ProfileDef } | undefined {
  if (!surface || !profile) return undefined;
  const id = profile.trim().toLowerCase();
  const def = Object.hasOwn(SURFACE_REGISTRY[surface].profiles, id)
    ? SURFACE_REGISTRY[surface].profiles[id]
    : undefined;
  return def ? { id, def } : undefined;
}

export function skillAllowed(skill: SkillDef, surface: Surface | undefined): boolean {
  return skill.surfaces === '*' || (surface !== undefined && skill.surfaces.includes(surface));
}

/** Surface baseline plus the profile's nudge, clamped to 0..1. */
export function baseSass(surface: Surface | undefined, profile?: ProfileDef): number {
  const base = surface ? SURFACE_REGISTRY[surface].sass : BASELINE.sass;
  return Math.min(1, Math.max(0, base + (profile?.sassDelta ?? 0)));
}

/**
 * Feedback moves the sass factor toward what users asked for: the mean of recent `sass` votes,
 * weighted by how many there are (at most half the weight, reached at 10 votes).
 */
export function adjustSass(base: number, feedback: { mean: number; count: number } | undefined): number {
  if (!feedback || feedback.count === 0) return round2(base);
  const w = Math.min(feedback.count, 10) / 20;
  return round2(Math.min(1, Math.max(0, base * (1 - w) + feedback.mean * w)));
}

function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
