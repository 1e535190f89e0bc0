import { buildOpenApi } from '../../api/openapi';
import { allRoutes } from '../../api/routes';

test('the OpenAPI contract documents the chat routes with their schemas and scopes', () => {
  const doc = buildOpenApi(allRoutes()) as any;
  const chat = doc.paths['/v1/chat/completions'].post;
  expect(chat.security).toEqual([{ bearerKey: ['runtime:chat'] }]);
  expect(JSON.stringify(chat.requestBody)).toContain('#/components/schemas/ChatCompletionRequest');
  expect(Object.keys(chat.responses)).toEqual(expect.arrayContaining(['200', '404', '429', '502', '503', '504']));
  for (const p of ['/v1/models', '/v1/modules', '/v1/cloud/models', '/v1/slm/models'])
    expect(doc.paths[p].get.security).toEqual([{ bearerKey: ['runtime:models'] }]);
  for (const p of [
    '/v1/chat/feedback',
    '/v1/feedback',
    '/v1/slm/chat/completions',
    '/v1/micro/chat/completions',
    '/v1/mid/chat/completions',
    '/v1/slm/commons/completions',
  ]) {
    expect(doc.paths[p].post.security).toEqual([{ bearerKey: ['runtime:chat'] }]);
  }
  expect(doc.paths['/v1/sessions/{id}'].get).toBeDefined();
  const req = doc.components.schemas.ChatCompletionRequest;
  expect(req.properties.messages.items.$ref ?? JSON.stringify(req.properties.messages)).toMatch(/ChatMessage/);
  expect(doc.components.schemas.CustomSkill.properties.instructions.maxLength).toBe(4000);
  // Client tools: the request's tools and tool loop messages, the answer's calls.
  expect(req.properties.tools.items.$ref).toBe('#/components/schemas/ClientTool');
  expect(doc.components.schemas.PersonaChatMessage.properties.role.enum).toContain('tool');
  const message = doc.components.schemas.ChatCompletionResponse.properties.choices.items.properties.message;
  expect(message.properties.tool_calls.items.$ref).toBe('#/components/schemas/ToolCall');
});
