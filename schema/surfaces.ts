/** Surfaces a request can pick with X-Svc-Context. Anything else is ignored (spec). */
export const SURFACES = ['studio', 'home', 'dev', 'red', 'learn'] as const;
export type Surface = (typeof SURFACES)[number];

/** Valid on every route; `learn` only where a route lists it in `RouteSpec.surfaces` (the mastery compiler). */
export const GENERAL_SURFACES: readonly Surface[] = ['studio', 'home', 'dev', 'red'];

/** Surfaces that only scope chat sessions (spec: "studio, dev, home, android, mobile"); no behaviour of their own. */
export const SESSION_ONLY_SURFACES = ['android', 'mobile'] as const;

export function parseSurface(
  header: string | undefined,
  allowed: readonly Surface[] = GENERAL_SURFACES,
): Surface | undefined {
  const v = header?.trim().toLowerCase();
  return (allowed as readonly string[]).includes(v ?? '') ? (v as Surface) : undefined;
}

/** The surface a chat session is scoped to: a behaviour surface, android or mobile; '' when none. */
export function sessionSurface(header: string | undefined, surface: Surface | undefined): string {
  if (surface) return surface;
  const v = header?.trim().toLowerCase() ?? '';
  return (SESSION_ONLY_SURFACES as readonly string[]).includes(v) ? v : '';
}
