import { describeLockConformance } from './lock-conformance.js';

describeLockConformance('redlock');
