import { z } from 'zod';
import { AuthMessage, SERVER_FRAMES, SubscribeMessage } from '../../schema/live-frames';
import { inlineJsonSchema } from '../../schema/json-schema';
import { CONTRACT_VERSION } from '../openapi';

type Json = Record<string, unknown>;

const payload = (schema: z.ZodType): Json => inlineJsonSchema(schema, 'output');

const idOf = (schema: z.ZodType) => String((schema.meta() as { id?: string } | undefined)?.id);

/**
 * The AsyncAPI 3 document of GET /v1/ws, generated from the same zod schemas that validate every
 * frame before it is sent (`schema/live-frames.ts`). Actions are from the server's side: it sends
 * frames and receives client messages.
 */
export function buildAsyncApi(serverUrl: string): Json {
  let url: URL;
  try {
    url = new URL(serverUrl);
  } catch {
    url = new URL('http://localhost'); // a Host header that is not a host name: publish a neutral server
  }
  const messages: Json = {};
  const sent = SERVER_FRAMES.map((s) => {
    const meta = s.meta() as { id: string; description?: string };
    messages[meta.id] = {
      name: meta.id,
      title: meta.id,
      summary: meta.description,
      contentType: 'application/json',
      payload: payload(s),
    };
    return meta.id;
  });
  const received = [AuthMessage, SubscribeMessage].map((s) => {
    const id = idOf(s);
    messages[id] = { name: id, title: id, contentType: 'application/json', payload: payload(s) };
    return id;
  });
  const ref = (id: string) => ({ $ref: `#/channels/live/messages/${id}` });
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'svc runtime live socket',
      version: CONTRACT_VERSION,
      description:
        'Public WebSocket at /v1/ws (no key). resonance_sync, sensory_sync, health_sync and curiosity_sync follow each live sample ' +
        '(once a minute); agent_dispatch when a job starts. token/done only after {"type":"auth","key"} and {"type":"subscribe","session"}, ' +
        "for generations of that key's tenant and session. The server pings; peers that miss a pong are closed.",
    },
    servers: { default: { host: url.host, protocol: url.protocol === 'https:' ? 'wss' : 'ws', pathname: '/v1/ws' } },
    channels: {
      live: {
        address: '/v1/ws',
        messages: Object.fromEntries(Object.keys(messages).map((id) => [id, { $ref: `#/components/messages/${id}` }])),
      },
    },
    operations: {
      sendFrames: { action: 'send', channel: { $ref: '#/channels/live' }, messages: sent.map(ref) },
      receiveClientMessages: { action: 'receive', channel: { $ref: '#/channels/live' }, messages: received.map(ref) },
    },
    components: { messages },
  };
}
