import type { ConnectionConfig } from '../config/connection-config.js';
import type { ConnectionStrategy } from './connection-strategy.js';
import { ClusterConnectionStrategy } from './cluster.strategy.js';
import { MasterSlaveConnectionStrategy } from './master-slave.strategy.js';
import { RedlockConnectionStrategy } from './redlock.strategy.js';
import { SentinelConnectionStrategy } from './sentinel.strategy.js';
import { SingleConnectionStrategy } from './single.strategy.js';

export function createConnectionStrategy(config: ConnectionConfig): ConnectionStrategy {
  switch (config.mode) {
    case 'single':
      return new SingleConnectionStrategy(config);
    case 'cluster':
      return new ClusterConnectionStrategy(config);
    case 'master-slave':
      return new MasterSlaveConnectionStrategy(config);
    case 'sentinel':
      return new SentinelConnectionStrategy(config);
    case 'redlock':
      return new RedlockConnectionStrategy(config);
  }
}
