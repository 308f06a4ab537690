export { FaultProxy, stopAllFaultProxies, type BlackholeOptions, type FaultProxyOptions, type FaultProxyStats } from './fault-proxy.js';
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
