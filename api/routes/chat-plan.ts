import type { getIdentity } from '../../activities/store/identity';
import { contentText } from '../../activities/providers/openai-client';
import { loadHistory } from '../../activities/store/sessions';
import { assemblePrompt, validZone, type PromptMessage } from '../../reasoning/persona';
import {
  adjustSass,
  baseSass,
  profileFor,
  SKILL_REGISTRY,
  skillAllowed,
  surfacesOf,
} from '../../reasoning/surfaces-registry';
import type { ChatCompletionRequest, LoadedMessage } from '../../schema/chat';
import type { ChatHeaders } from '../../schema/headers';
import { AppError } from '../../schema/errors';
import { sessionSurface, type Surface } from '../../schema/surfaces';
import type { AppContext } from '../context';
import { gatewayOf } from '../gateway';

export interface ChatPlan {
  surface?: Surface;
  profile?: string;
  skills: string[];
  sessionKey?: string;
  /** Surface the session is scoped to: the behaviour surface, or android/mobile; '' when none. */
  sessionSurface: string;
  sass: number;
  messages: PromptMessage[];
  /** The newest user message (what a session stores). */
  lastUser?: string;
}

/** svc_skills.enabled merged with X-Svc-Skill; each must exist and be allowed on the surface. @throws AppError invalid_request */
function resolveSkills(header: string[], enabled: string[] | undefined, surface: Surface | undefined): string[] {
  const ids = [...new Set([...(enabled ?? []), ...header].map((s) => s.toLowerCase()))];
  if (ids.length > 16) throw new AppError('invalid_request', 'At most 16 skills can be enabled per request.');
  for (const id of ids) {
    const skill = Object.hasOwn(SKILL_REGISTRY, id) ? SKILL_REGISTRY[id] : undefined;
    if (!skill) {
      throw new AppError('invalid_request', `Unknown skill '${id}'. GET /v1/modules lists the built-in skills.`, {
        details: [{ path: 'body.svc_skills.enabled', message: `unknown skill ${id}` }],
      });
    }
    if (!skillAllowed(skill, surface)) {
      const where = surfacesOf(skill.surfaces).join(', ');
      throw new AppError(
        'invalid_request',
        `Skill '${id}' is not allowed on ${surface ? `surface '${surface}'` : 'requests without X-Svc-Context'} (allowed on: ${where}).`,
        {
          details: [{ path: 'body.svc_skills.enabled', message: `skill ${id} not allowed here` }],
        },
      );
    }
  }
  return ids;
}

/** The saved profile as a prompt hint (it goes through the same identity filter as user skills). */
function identityHint(
  identity: Awaited<ReturnType<typeof getIdentity>>,
  tone: string | undefined,
): Array<{ name: string; instructions: string }> {
  if (identity.updatedAt === null) return [];
  return [
    {
      name: 'Active profile',
      instructions: `Profile "${identity.profile.name}": keep a ${tone ?? identity.profile.tone} tone.`,
    },
  ];
}

/**
 * Everything the persona gateway decides before calling the lane: surface, profile, skills,
 * session history, sass (surface + profile, moved by feedback), and the assembled prompt.
 */
export async function planChat(
  ctx: AppContext,
  body: Omit<ChatCompletionRequest, 'messages'>,
  messages: LoadedMessage[],
  tenantId: string,
  headers: ChatHeaders,
): Promise<ChatPlan> {
  const surface = ctx.state.surface as Surface | undefined;
  // The tenant's saved profile (PUT /v1/sovereign/identity) gives the default working style and tone.
  const identity = await gatewayOf(ctx.deps).identity.of(tenantId);
  const override = surface ? identity.profile.surface_overrides[surface] : undefined;
  const profile = profileFor(surface, body.profile) ?? profileFor(surface, override?.working_style);
  const skills = resolveSkills(headers['x-svc-skill'], body.svc_skills?.enabled, surface);
  const sessionKey = headers['x-session-id'];
  const scope = sessionSurface(ctx.get('X-Svc-Context') || undefined, surface);
  // A client that sends its own earlier turns keeps control of the history: no server history then.
  const wantsHistory = sessionKey !== undefined && !messages.some((m) => m.role === 'assistant');
  const [signal, history] = await Promise.all([
    gatewayOf(ctx.deps).feedback.signal({ tenantId, surface: surface ?? '', profile: profile?.id }),
    wantsHistory ? loadHistory(ctx.deps.db, { tenantId, surface: scope, sessionKey }) : Promise.resolve([]),
  ]);
  const sass = adjustSass(baseSass(surface, profile?.def), signal);
  const { messages: prompt } = assemblePrompt({
    surface,
    profile,
    skills: skills.map((id) => SKILL_REGISTRY[id]),
    custom: [...identityHint(identity, override?.tone), ...(body.svc_skills?.custom ?? [])],
    sass,
    now: new Date(),
    timezone: validZone(headers['x-timezone']),
    env: {
      os: ctx.get('X-Env-OS'),
      pwd: ctx.get('X-Env-PWD'),
      project: ctx.get('X-Env-Project'),
      shell: ctx.get('X-Env-Shell'),
    },
    lessons: signal?.lessons ?? [],
    history,
    messages,
  });
  // What a session stores of the newest user message: its text (an image's message, its text parts).
  const newest = [...messages].reverse().find((m) => m.role === 'user');
  const lastUser = newest ? contentText(newest.content) : undefined;
  return {
    surface,
    profile: profile?.id,
    skills,
    sessionKey,
    sessionSurface: scope,
    sass,
    messages: prompt,
    lastUser,
  };
}
