/** Kept for tests that spawn children with `-r test/helpers/ts-register.js`: the hook lives in bin/. */
'use strict';
require('../../bin/ts-register.js');
