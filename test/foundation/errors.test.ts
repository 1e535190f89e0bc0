import { startHarness, type Harness } from '../helpers/harness';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ env: { SVC_BODY_LIMIT: '2048' } });
});
afterAll(async () => h?.close());

describe('one error model', () => {
  test('unknown route 404 with an ErrorResponse and a request id', async () => {
    const r = await h.req('GET', '/v1/nope');
    expect(r.status).toBe(404);
    expect(r.body.error).toMatch(/No route for GET \/v1\/nope/);
    expect(r.body.code).toBe('not_found');
    expect(r.headers.get('x-request-id')).toBe(r.body.request_id);
  });

  test('an incoming X-Request-Id is kept', async () => {
    const r = await h.req('GET', '/v1/nope', { headers: { 'X-Request-Id': 'trace-123' } });
    expect(r.headers.get('x-request-id')).toBe('trace-123');
  });

  test('405 for a known path with the wrong method', async () => {
    const r = await h.req('DELETE', '/v1/waitlist');
    expect(r.status).toBe(405);
    expect(r.body.code).toBe('method_not_allowed');
  });

  test('malformed JSON is 400 invalid_json, never 500', async () => {
    const r = await h.req('POST', '/v1/waitlist', { raw: '{"email": ', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('invalid_json');
  });

  test('a JSON scalar body is rejected as malformed', async () => {
    const r = await h.req('POST', '/v1/waitlist', { raw: '"x"', headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(400);
  });

  test('wrong types name each field path', async () => {
    const r = await h.req('POST', '/v1/waitlist', { body: { email: 'not-an-email', name: 5 } });
    expect(r.status).toBe(400);
    expect(r.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['body.email', 'body.name']);
  });

  test('a body over the limit is 413', async () => {
    const r = await h.req('POST', '/v1/waitlist', { body: { name: 'x'.repeat(5000) } });
    expect(r.status).toBe(413);
    expect(r.body.code).toBe('payload_too_large');
  });

  test('a non-JSON body is 415', async () => {
    const r = await h.req('POST', '/v1/waitlist', { raw: 'email=a@b.c', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(r.status).toBe(415);
  });
});
