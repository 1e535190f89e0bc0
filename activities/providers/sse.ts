import { createParser, type EventSourceParser } from 'eventsource-parser';

/**
 * The `data` payloads of a server-sent-event byte stream, fed read by read (eventsource-parser:
 * multi-line data joined with \n, comments and other fields skipped, CR/LF/CRLF, events and
 * characters split across reads). Synchronous, so a streamed answer is parsed without a
 * generator per layer.
 */
export class SseEvents {
  private readonly decoder = new TextDecoder();
  private readonly parser: EventSourceParser;
  private out: string[] = [];

  constructor() {
    this.parser = createParser({ onEvent: (e) => this.out.push(e.data) });
  }

  /** The events completed by these bytes. */
  push(bytes: Uint8Array): string[] {
    this.parser.feed(this.decoder.decode(bytes, { stream: true }));
    return this.take();
  }

  /**
   * The end of the stream: an event whose closing blank line never came is still delivered (as the
   * parser before this one did; some upstreams end with `data: [DONE]` and no blank line).
   */
  end(): string[] {
    this.parser.feed(`${this.decoder.decode()}\n\n`);
    return this.take();
  }

  private take(): string[] {
    if (this.out.length === 0) return [];
    const events = this.out;
    this.out = [];
    return events;
  }
}

/** The `data` payloads of an SSE byte stream. `onBytes` runs for every read (idle-timeout resets). */
export async function* sseData(body: AsyncIterable<Uint8Array>, onBytes?: () => void): AsyncGenerator<string> {
  const events = new SseEvents();
  for await (const bytes of body) {
    onBytes?.();
    yield* events.push(bytes);
  }
  yield* events.end();
}
