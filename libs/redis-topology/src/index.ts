export { freePort } from './free-port.js';
export { RedisServer, stopAllRedisServers, type RedisServerOptions } from './redis-server.js';
