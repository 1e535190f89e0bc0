#!/usr/bin/env node
/**
 * `npm run keys|spaces -- ...`: runs an operator CLI straight from its TypeScript source on a fresh clone
 * (no build step), or from dist/ where SWC is absent (an image installed with `npm ci --omit=dev`).
 */
'use strict';
const path = require('node:path');

const root = path.resolve(__dirname, '..');

function hasSwc() {
  try {
    require.resolve('@swc/core');
    return true;
  } catch {
    return false;
  }
}

function main() {
  const name = process.argv[2];
  if (!/^[a-z-]+-cli$/.test(name ?? '')) {
    process.stderr.write('usage: node bin/svc-cli.js <keys-cli|spaces-cli> [args...]\n');
    process.exitCode = 2;
    return;
  }
  process.argv.splice(2, 1);
  if (hasSwc()) {
    require('./ts-register.js');
    require(path.join(root, 'workers', `${name}.ts`));
  } else {
    require(path.join(root, 'dist', 'workers', `${name}.js`));
  }
}

main();
