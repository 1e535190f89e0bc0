import v8 from 'node:v8';

/**
 * V8 settings of a process that serves the API (`npm run api`, `npm start`; the gateway bench's
 * server processes too, so they run as users run them).
 *
 * V8's memory reducer, a few seconds after start-up (and after later major collections, once
 * allocation slows), compacts the whole heap (~100 MB in an API process): 100–330 ms main-thread
 * pauses on a busy 2-core host, during which every request and WebSocket frame of the process
 * waits (seen in the ws bench, and as the gateway bench's 20 ms-upstream p99). Without "favors
 * memory" that collection is an ordinary incremental one (16–50 ms pauses measured) and free
 * pages are still given back. V8 reads the flag at each such collection.
 */
export function tuneV8ForServing(): void {
  v8.setFlagsFromString('--no-memory-reducer-favors-memory');
}
