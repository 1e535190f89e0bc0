/**
 * Lets a plain `node` process require our TypeScript sources without a build (used by tests that
 * run code in a child process, e.g. a worker they can SIGKILL):
 *   node -r ./bin/ts-register.js test/helpers/worker-child.ts (also: bin/svc-cli.js)
 * Each .ts file is compiled to CommonJS with SWC (types stripped, no type checking), like Jest does.
 */
'use strict';
const fs = require('node:fs');
const { transformSync } = require('@swc/core');

require.extensions['.ts'] = function compileTs(module, filename) {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = transformSync(source, {
    filename,
    sourceMaps: 'inline',
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
    module: { type: 'commonjs' },
  });
  module._compile(code, filename);
};
