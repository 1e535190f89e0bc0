/** Surfaces a request can pick with X-Svc-Context. Anything else is ignored (spec). */
export const SURFACES = ['studio', 'home', 'dev', 'red', 'learn'] as const;
export type Surface = (typeof SURFACES)[number];

export function parseSurface(header: string | undefined): Surface | undefined {
  const v = header?.trim().toLowerCase();
  return (SURFACES as readonly string[]).includes(v ?? '') ? (v as Surface) : undefined;
}
