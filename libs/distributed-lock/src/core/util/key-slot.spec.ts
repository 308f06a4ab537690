import { hashedPart, hashSlot, keySlot } from './key-slot.js';

describe('hashedPart and keySlot', () => {
  it.each([
    ['lock:{order:7}', 'order:7'], // a lock's keys: its {name}
    ['{a}b{c}', 'a'], // the first tag only
    ['x}{a}', 'a'], // a `}` before the first `{` does not count
    ['a{}b', 'a{}b'], // an empty tag: the whole key
    ['{}{a}', '{}{a}'], // the first `{` decides, even when its tag is empty
    ['a{b', 'a{b'], // no closing brace: the whole key
    ['plain', 'plain'],
    ['', ''],
  ])('%s is hashed as %s', (key, part) => {
    expect(hashedPart(key)).toBe(part);
    expect(keySlot(key)).toBe(hashSlot(part));
  });

  it('keys with the same tag share a slot (known slots: Redis Cluster hashes "foo" to 12182)', () => {
    expect(keySlot('{foo}:lock')).toBe(12182);
    expect(keySlot('prefix:{foo}:fence')).toBe(keySlot('{foo}'));
  });
});
