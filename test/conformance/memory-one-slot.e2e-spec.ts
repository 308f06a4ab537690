import { InMemoryLockStore } from 'nestjs-distributed-lock/testing';
import { describeMemoryConformance } from './lock-conformance.js';
import { describeStrictKeysControls } from './strict-keys-controls.js';

// The same suite with the clients' oneSlotPerScript on a store that also refuses a script whose keys
// span two cluster slots, as ElastiCache Serverless, Redis Cloud without the OSS Cluster API and
// Azure Managed Redis's Enterprise policy do (docs/operations/managed-services.md).
const store = new InMemoryLockStore({ strictKeys: 'one-slot' });
describeMemoryConformance({ store, oneSlotPerScript: true });
describeStrictKeysControls(store);
