export { freePort } from './free-port.js';
export { RedisServer, stopAllRedisServers, type RedisServerOptions } from './redis-server.js';
export {
  clusterMasterOf,
  currentSentinelMaster,
  startCluster,
  startIndependentNodes,
  startMasterReplicas,
  startSentinelTopology,
  startSingle,
  startTopology,
  waitUntil,
  withClient,
  type ServerSettings,
  type Topology,
  type TopologyMode,
} from './topologies.js';
