import { loadHistory } from '../../activities/store/sessions';
import { assemblePrompt, validZone, type PromptMessage } from '../../reasoning/persona';
import { adjustSass, baseSass, profileFor, SKILL_REGISTRY, skillAllowed, surfacesOf } from '../../reasoning/surfaces-registry';
import { SESSION_ID, type ChatCompletionRequest } from '../../schema/chat';
import { AppError } from '../../schema/errors';
import type { Surface } from '../../schema/surfaces';
import type { AppContext } from '../context';
import { gatewayOf } from '../gateway';

export interface ChatPlan {
  surface?: Surface;
  profile?: string;
  skills: string[];
  sessionKey?: string;
  sass: number;
  messages: PromptMessage[];
  /** The newest user message (what a session stores). */
  lastUser?: string;
}

/** X-Session-ID, validated. @throws AppError invalid_request */
export function sessionKeyOf(ctx: AppContext): string | undefined {
  const raw = ctx.get('X-Session-ID').trim();
  if (!raw) return undefined;
  if (!SESSION_ID.test(raw)) {
    throw new AppError('invalid_request', 'X-Session-ID must be 1-128 characters of letters, digits, ".", "_", ":" or "-" (a UUID works).', {
      details: [{ path: 'headers.x-session-id', message: 'invalid session id' }],
    });
  }
  return raw;
}

/** svc_skills.enabled merged with X-Svc-Skill; each must exist and be allowed on the surface. @throws AppError invalid_request */
function resolveSkills(ctx: AppContext, enabled: string[] | undefined, surface: Surface | undefined): string[] {
  const header = ctx.get('X-Svc-Skill').split(',').map((s) => s.trim()).filter(Boolean);
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
      throw new AppError('invalid_request', `Skill '${id}' is not allowed on ${surface ? `surface '${surface}'` : 'requests without X-Svc-Context'} (allowed on: ${where}).`, {
        details: [{ path: 'body.svc_skills.enabled', message: `skill ${id} not allowed here` }],
      });
    }
  }
  return ids;
}

/**
 * Everything the persona gateway decides before calling the lane: surface, profile, skills,
 * session history, sass (surface + profile, moved by feedback), and the assembled prompt.
 */
export async function planChat(ctx: AppContext, body: ChatCompletionRequest, tenantId: string): Promise<ChatPlan> {
  const surface = ctx.state.surface as Surface | undefined;
  const profile = profileFor(surface, body.profile);
  const skills = resolveSkills(ctx, body.svc_skills?.enabled, surface);
  const sessionKey = sessionKeyOf(ctx);
  // A client that sends its own earlier turns keeps control of the history: no server history then.
  const wantsHistory = sessionKey !== undefined && !body.messages.some((m) => m.role === 'assistant');
  const [signal, history] = await Promise.all([
    gatewayOf(ctx.deps).feedback.signal({ tenantId, surface: surface ?? '', profile: profile?.id }),
    wantsHistory ? loadHistory(ctx.deps.db, { tenantId, surface: surface ?? '', sessionKey }) : Promise.resolve([]),
  ]);
  const sass = adjustSass(baseSass(surface, profile?.def), signal);
  const { messages } = assemblePrompt({
    surface,
    profile,
    skills: skills.map((id) => SKILL_REGISTRY[id]),
    custom: body.svc_skills?.custom ?? [],
    sass,
    now: new Date(),
    timezone: validZone(ctx.get('X-Timezone') || undefined),
    env: { os: ctx.get('X-Env-OS'), pwd: ctx.get('X-Env-PWD'), project: ctx.get('X-Env-Project'), shell: ctx.get('X-Env-Shell') },
    lessons: signal?.lessons ?? [],
    history,
    messages: body.messages,
  });
  const lastUser = [...body.messages].reverse().find((m) => m.role === 'user')?.content;
  return { surface, profile: profile?.id, skills, sessionKey, sass, messages, lastUser };
}
