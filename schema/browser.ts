import { z } from 'zod';
import { BROWSER_ACTIONS } from '../workflows/browser-defs';

const SessionId = z.string().min(1).max(100).describe('Browser session id (bse_...).');
const Ref = z.string().regex(/^[a-z0-9]{1,20}$/, 'must be a ref from a snapshot, e.g. e12 or f1e3');

export const BrowserSessionCreateBody = z.strictObject({
  viewport: z
    .strictObject({ width: z.number().int().min(200).max(4096), height: z.number().int().min(200).max(4096) })
    .optional(),
  locale: z
    .string()
    .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a BCP 47 tag such as en-US')
    .optional(),
  timezone: z
    .string()
    .min(1)
    .max(64)
    .regex(/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/, 'must be an IANA zone such as Europe/Berlin')
    .optional(),
  user_agent: z.string().min(1).max(500).optional(),
  state: z.string().min(1).max(100).optional().describe('A saved state (name or id) to open the session with.'),
  idle_timeout_s: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('Idle timeout in seconds (default 600, at most SVC_BROWSER_MAX_IDLE_TIMEOUT_S).'),
});

export const BrowserSession = z
  .object({
    id: z.string(),
    object: z.literal('browser.session'),
    status: z.enum(['opening', 'open', 'recovering', 'closed', 'expired', 'failed']),
    url: z.string().nullable(),
    title: z.string().nullable(),
    worker_id: z.string().nullable(),
    idle_timeout_s: z.number(),
    expires_at: z.string().nullable(),
    checkpoint_at: z.string().nullable(),
    recoveries: z.number(),
    error: z.string().nullable(),
    options: z.record(z.string(), z.unknown()),
    created_at: z.string(),
    closed_at: z.string().nullable(),
  })
  .meta({ id: 'BrowserSession' });

export const SessionIdParams = z.object({ id: SessionId });
export const SessionIdQuery = z.object({ session_id: SessionId });
export const BrowserListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  offset: z.coerce.number().int().min(0).default(0),
  live: z
    .enum(['true', 'false'])
    .default('false')
    .transform((v) => v === 'true')
    .describe('Only opening, open or recovering sessions.'),
});

export const BrowserOpenBody = z.strictObject({
  session_id: SessionId.optional().describe('The session to navigate; left out, a new session is opened for the URL.'),
  url: z.string().min(1).max(4000),
  wait_until: z.enum(['load', 'domcontentloaded', 'networkidle', 'commit']).default('load'),
  timeout_ms: z.number().int().min(100).max(120_000).default(30_000),
});

const bool = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');
export const BrowserSnapshotQuery = z.object({
  session_id: SessionId,
  ref: Ref.optional(),
  depth: z.coerce.number().int().min(1).max(100).optional(),
  max_chars: z.coerce
    .number()
    .int()
    .min(200)
    .max(1_000_000)
    .default(32_000)
    .describe('Default ≈ 8k tokens; longer snapshots are cut at a line and `truncated` is true.'),
  diff: bool.default(false).describe('Only the lines changed since the previous snapshot (`+ ` added, `- ` removed).'),
});

/** The fields of a browser action besides the session (shared with a workspace run's own-session tool). */
/** The snapshot's options as JSON fields (the tools' form of `BrowserSnapshotQuery`). */
export const BrowserSnapshotFields = {
  ref: z.string().min(1).max(40).optional(),
  depth: z.number().int().min(1).max(100).optional(),
  max_chars: z.number().int().min(200).max(1_000_000).default(32_000),
  diff: z.boolean().default(false),
};

export const BrowserActionFields = {
  action: z.enum(BROWSER_ACTIONS),
  ref: Ref.optional(),
  selector: z
    .string()
    .min(1)
    .max(1000)
    .optional()
    .describe('A Playwright selector (CSS, text=, role=); refs are preferred.'),
  text: z.string().max(100_000).optional(),
  key: z.string().min(1).max(50).optional(),
  values: z.array(z.string().max(1000)).min(1).max(100).optional(),
  amount: z
    .number()
    .int()
    .min(-100_000)
    .max(100_000)
    .optional()
    .describe('Pixels to scroll (scroll without a target).'),
  timeout_ms: z.number().int().min(100).max(60_000).default(10_000),
  snapshot_diff: z.boolean().default(false).describe('Also return the snapshot lines the action changed.'),
};

export type ActionFields = z.output<z.ZodObject<typeof BrowserActionFields>>;

/** The cross-field rules of a browser action (target, text, key, values by action). */
export function checkBrowserAction(b: ActionFields, ctx: z.RefinementCtx): void {
  if (b.ref && b.selector)
    ctx.addIssue({ code: 'custom', path: ['selector'], message: 'give ref or selector, not both' });
  const needsTarget = ['click', 'fill', 'type', 'select', 'check', 'uncheck', 'hover'].includes(b.action);
  if (needsTarget && !b.ref && !b.selector)
    ctx.addIssue({ code: 'custom', path: ['ref'], message: `required for ${b.action} (or selector)` });
  if ((b.action === 'fill' || b.action === 'type') && b.text === undefined)
    ctx.addIssue({ code: 'custom', path: ['text'], message: `required for ${b.action}` });
  if (b.action === 'press' && !b.key) ctx.addIssue({ code: 'custom', path: ['key'], message: 'required for press' });
  if (b.action === 'select' && !b.values)
    ctx.addIssue({ code: 'custom', path: ['values'], message: 'required for select' });
}

export const BrowserActionBody = z
  .strictObject({ session_id: SessionId, ...BrowserActionFields })
  .superRefine(checkBrowserAction);

export const BrowserScreenshotBody = z.strictObject({
  session_id: SessionId,
  full_page: z.boolean().default(false),
  ref: Ref.optional(),
  format: z.enum(['png', 'jpeg']).default('png'),
  quality: z.number().int().min(1).max(100).optional().describe('JPEG quality.'),
});

export const BrowserStateSaveBody = z.strictObject({
  session_id: SessionId,
  name: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[\w.-]+$/, 'letters, digits, _, . and - only'),
});

export const BrowserStateLoadBody = z
  .strictObject({
    session_id: SessionId,
    name: z.string().min(1).max(100).optional(),
    state_id: z.string().min(1).max(100).optional(),
  })
  .refine((b) => (b.name === undefined) !== (b.state_id === undefined), {
    path: ['name'],
    message: 'give name or state_id (exactly one)',
  });

export const BrowserCommandResponse = z
  .object({
    url: z.string(),
    title: z.string(),
    session_id: z
      .string()
      .optional()
      .describe('The session the command ran in (open names it: it may have opened it).'),
  })
  .catchall(z.unknown());

export const BrowserHealth = z.object({
  available: z.boolean(),
  reason: z.string().nullable(),
  chromium: z.object({ path: z.string(), found: z.boolean(), version: z.string().nullable() }),
  workers: z.number().describe('Browser workers polling now.'),
  capacity: z.object({ per_worker: z.number(), per_tenant: z.number(), total: z.number() }),
  sessions_open: z.number().describe("This tenant's opening, open or recovering sessions."),
});
