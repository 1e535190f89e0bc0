import { z } from 'zod';
import { SURFACE_REGISTRY } from '../reasoning/surfaces-registry';
import { PERSONA_NAME } from '../reasoning/persona';
import { SURFACES } from './surfaces';

export const TONES = ['neutral', 'warm', 'direct', 'playful', 'formal'] as const;

const SurfaceOverride = z.object({
  tone: z.enum(TONES).optional(),
  working_style: z.string().max(50).optional().describe('A working style (profile) of this surface.'),
});

/**
 * The tenant's active profile: how the fixed persona presents itself to this tenant (a name for
 * the profile, tone, default working style per surface). It never changes the persona's identity.
 */
export const IdentityProfile = z
  .object({
    name: z
      .string()
      .trim()
      .min(1)
      .max(60)
      .describe('Name of this profile (the persona stays ' + PERSONA_NAME + ').'),
    tone: z.enum(TONES),
    surface_overrides: z.partialRecord(z.enum(SURFACES), SurfaceOverride).default({}),
  })
  .superRefine((p, ctx) => {
    for (const [surface, o] of Object.entries(p.surface_overrides)) {
      const profiles = SURFACE_REGISTRY[surface as keyof typeof SURFACE_REGISTRY].profiles;
      if (o?.working_style && !Object.hasOwn(profiles, o.working_style)) {
        ctx.addIssue({
          code: 'custom',
          path: ['surface_overrides', surface, 'working_style'],
          message: `not a working style of ${surface} (one of: ${Object.keys(profiles).join(', ')})`,
        });
      }
    }
  })
  .meta({ id: 'IdentityProfile' });
export type IdentityProfile = z.infer<typeof IdentityProfile>;

export const IdentityResponse = z
  .object({
    persona: z.string().describe('The fixed identity; profiles cannot change it.'),
    profile: IdentityProfile,
    updated_at: z.string().nullable().describe('null = the default profile, never saved.'),
  })
  .meta({ id: 'IdentityResponse' });

export const DEFAULT_IDENTITY: IdentityProfile = { name: 'Default', tone: 'neutral', surface_overrides: {} };
