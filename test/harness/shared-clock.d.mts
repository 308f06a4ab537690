/** Milliseconds (microsecond resolution) on the machine's monotonic clock, comparable across its processes. */
export declare function sharedNow(): number;
