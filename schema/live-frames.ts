import { z } from 'zod';
import { SessionId } from './chat';

/*
 * WebSocket frames of GET /v1/ws (server → client) and the messages a client may send. Every
 * outgoing frame is validated against its schema; the AsyncAPI document publishes the same schemas.
 */

export const ResonanceSync = z
  .object({
    type: z.literal('resonance_sync'),
    eri: z.number(),
    ers: z.number().int(),
    key: z.string(),
    bpm: z.number().int(),
    sampled_at: z.string(),
  })
  .meta({
    id: 'ResonanceSync',
    description: 'Resonance index, score, musical key and tempo (same data as GET /v1/eri).',
  });

export const SensorySync = z
  .object({
    type: z.literal('sensory_sync'),
    hex: z.string().regex(/^#[0-9a-f]{6}$/),
    opacity: z.number().min(0).max(1),
    pulse: z.number().min(0),
  })
  .meta({
    id: 'SensorySync',
    description: 'Accent colour (ERI palette), opacity (0.5 + 0.5 × AECI stability) and pulse in Hz (bpm / 60).',
  });

export const HealthSync = z
  .object({
    type: z.literal('health_sync'),
    cpu: z.number(),
    ram: z.number(),
    db: z.number(),
    cognitive_health: z.string(),
  })
  .meta({ id: 'HealthSync', description: 'Substrate load (0..1) measured by the sampler, and a health label.' });

export const CuriositySync = z
  .object({ type: z.literal('curiosity_sync'), target: z.string(), priority: z.number() })
  .meta({
    id: 'CuriositySync',
    description: 'Busiest capability family in the last window and its share of the work.',
  });

export const AgentDispatch = z
  .object({ type: z.literal('agent_dispatch'), action: z.string().max(50) })
  .meta({ id: 'AgentDispatch', description: 'A capability or agent job started: its kind only (no tenant data).' });

export const TokenFrame = z.object({ type: z.literal('token'), session: z.string(), content: z.string() }).meta({
  id: 'TokenFrame',
  description: 'A streamed token of a generation; only to the authenticated owner subscribed to the session.',
});

export const DoneFrame = z
  .object({ type: z.literal('done'), session: z.string() })
  .meta({ id: 'DoneFrame', description: 'Generation complete (owner only).' });

export const ReplyFrame = z
  .object({ type: z.enum(['auth_ok', 'subscribed', 'error']), message: z.string().optional() })
  .meta({ id: 'ReplyFrame', description: 'Answer to a client message.' });

export const SERVER_FRAMES = [
  ResonanceSync,
  SensorySync,
  HealthSync,
  CuriositySync,
  AgentDispatch,
  TokenFrame,
  DoneFrame,
  ReplyFrame,
] as const;
export const ServerFrame = z.discriminatedUnion('type', SERVER_FRAMES);
export type ServerFrame = z.infer<typeof ServerFrame>;

export const AuthMessage = z
  .object({ type: z.literal('auth'), key: z.string().min(1).max(300) })
  .meta({ id: 'AuthMessage' });
export const SubscribeMessage = z
  .object({
    type: z.literal('subscribe'),
    session: SessionId.describe("The X-Session-ID (or the chat's X-Request-Id) whose generations to receive."),
  })
  .meta({ id: 'SubscribeMessage' });
export const ClientMessage = z.discriminatedUnion('type', [AuthMessage, SubscribeMessage]);
