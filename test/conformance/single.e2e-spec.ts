import { describeLockConformance } from './lock-conformance.js';

describeLockConformance('single');
