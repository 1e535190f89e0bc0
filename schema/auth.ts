import { z } from 'zod';

export const SCOPES = [
  'runtime:chat',
  'runtime:models',
  'runtime:spaces',
  'runtime:workspaces',
  'runtime:records',
  'runtime:email:send',
] as const;
export type RuntimeScope = (typeof SCOPES)[number];

/** Scopes granted by POST /v1/app/register, per first-party app. */
export const APP_SCOPES: Record<string, RuntimeScope[]> = {
  home: ['runtime:chat', 'runtime:models', 'runtime:spaces', 'runtime:workspaces'],
  studio: ['runtime:chat', 'runtime:models'],
  mobile: ['runtime:chat', 'runtime:models'],
  dev: ['runtime:chat', 'runtime:models'],
};

export const KEY_KINDS = ['runtime', 'legacy', 'bootstrap'] as const;
export type KeyKind = (typeof KEY_KINDS)[number];

/** `My App!` → `my-app`: the form used in `bootstrap:app:<name>` scopes. */
export function normalizeAppName(name: string): string {
  return name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

export const scopeString = z
  .string()
  .regex(/^[a-z][a-z0-9-]*(:[a-z0-9][a-z0-9_-]*)+$/, 'scope must look like runtime:chat');

export const RegisterAppBody = z
  .object({
    app_name: z.string().min(1).max(100).describe('First-party app: home, studio, mobile or dev.'),
    device_id: z.string().max(200).optional(),
    tenant: z.string().max(100).optional().describe('Existing tenant id; omitted = a new tenant.'),
  })
  .meta({ id: 'RegisterAppRequest' });

export const AgentRegisterBody = z
  .object({
    app_name: z.string().min(1).max(100),
    device_id: z.string().max(200).optional(),
  })
  .meta({ id: 'AgentRegisterRequest' });

export const MintedKey = z
  .object({
    api_key: z.string().describe('The key; shown once, only its hash is stored.'),
    key_id: z.string(),
    tenant_id: z.string(),
    app: z.string().optional(),
    scopes: z.array(z.string()),
  })
  .meta({ id: 'MintedKey' });
export type MintedKey = z.infer<typeof MintedKey>;

export const KeyInfo = z
  .object({
    key_id: z.string(),
    tenant_id: z.string(),
    kind: z.enum(KEY_KINDS),
    app: z.string().nullable(),
    scopes: z.array(z.string()),
  })
  .meta({ id: 'KeyInfo' });
