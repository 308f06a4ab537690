// What the recipes use of BullMQ 5 (see README.md beside this folder).
export declare class Job<DataType = unknown, ReturnType = unknown, NameType extends string = string> {
  id?: string;
  name: NameType;
  data: DataType;
  attemptsMade: number;
  returnvalue: ReturnType;
  updateProgress(progress: number | object): Promise<void>;
}
