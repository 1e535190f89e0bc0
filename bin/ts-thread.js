/**
 * A worker thread's entry when our sources run without a build (tests, `ts-register` processes):
 * compiles TypeScript as bin/ts-register.js does, then exports the module named in the thread's
 * workerData (`{ entry }`). Built code (dist/) starts its compiled entry directly.
 */
'use strict';
require('./ts-register.js');
module.exports = require(require('piscina').workerData.entry);
