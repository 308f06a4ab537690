// What the recipes use of TypeORM 0.3 (see README.md beside this folder).
export type ObjectLiteral = object;
export type EntityTarget<Entity> = (new () => Entity) | string;
export declare class FindOperator<T> {
  private readonly value: T;
}
export declare function LessThanOrEqual<T>(value: T | FindOperator<T>): FindOperator<T>;
export type FindOptionsWhere<Entity> = { [P in keyof Entity]?: Entity[P] | FindOperator<Entity[P]> };
export interface UpdateResult {
  raw: unknown;
  affected?: number;
  generatedMaps: ObjectLiteral[];
}
export declare class EntityManager {
  update<Entity extends ObjectLiteral>(target: EntityTarget<Entity>, criteria: FindOptionsWhere<Entity>, partialEntity: Partial<Entity>): Promise<UpdateResult>;
  findOneByOrFail<Entity extends ObjectLiteral>(entityClass: EntityTarget<Entity>, where: FindOptionsWhere<Entity>): Promise<Entity>;
}
export declare class DataSource {
  transaction<T>(runInTransaction: (entityManager: EntityManager) => Promise<T>): Promise<T>;
}
export declare function Entity(name?: string): ClassDecorator;
export declare function PrimaryColumn(options?: ObjectLiteral): PropertyDecorator;
export declare function Column(options?: ObjectLiteral): PropertyDecorator;
