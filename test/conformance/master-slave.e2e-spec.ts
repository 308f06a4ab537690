import { describeLockConformance } from './lock-conformance.js';

describeLockConformance('master-slave');
