import { jsonIn } from '../../activities/providers/json-answer';
import { parsePlan } from '../../reasoning/job-plan';
import { parseStorableJson, unstorablePaths } from '../../schema/storable';

// A model's JSON answer can spell what PostgreSQL cannot store as escapes (\u0000, a lone \ud800): JSON.parse decodes
// them, and the goal plan, tool plan, research report or vision memory built from it failed to save.

const ODD = String.raw`{"steps":[{"title":"Wake\u0000","prompt":"Dig \ud800 out"}],"k\u0000ey":{"deep":["x\udc00"]}}`;

test('parseStorableJson reads escapes as U+FFFD in strings and keys; the rest as JSON.parse', () => {
  const v = parseStorableJson(ODD);
  expect(v).toEqual({
    steps: [{ title: 'Wake\uFFFD', prompt: 'Dig \uFFFD out' }],
    'k\uFFFDey': { deep: ['x\uFFFD'] },
  });
  expect(unstorablePaths(v, 'v')).toEqual([]);
  expect(unstorablePaths(JSON.parse(ODD), 'v')).not.toEqual([]);
  expect(parseStorableJson('{"a":[1,true,null,"ok 🎉"]}')).toEqual({ a: [1, true, null, 'ok 🎉'] });
  expect(() => parseStorableJson('{"a":')).toThrow(SyntaxError);
});

test('goal plans and JSON answers written by a model come out storable', () => {
  expect(parsePlan(`Here you go: ${ODD}`, 'Goal', null)).toEqual([{ title: 'Wake\uFFFD', prompt: 'Dig \uFFFD out' }]);
  expect(unstorablePaths(jsonIn(`\`\`\`json\n${ODD}\n\`\`\``), 'v')).toEqual([]);
});
