/**
 * Profiles and the backends each brings into scope. The facts (the five
 * profile names, what each is for, the 12 default backends) are shared with
 * the catalog through `@heretek/internal`; this module only reads them.
 */
import {
  DEFAULT_BACKENDS,
  PROFILE_NAMES,
  isProfileName,
  type BackendDefinition,
  type ProfileName,
} from '@heretek/internal';
import { UnknownProfileError } from './errors.js';

export { PROFILE_NAMES, PROFILE_PURPOSES } from '@heretek/internal';
export type { ProfileName } from '@heretek/internal';

/** The validated profile name; throws {@link UnknownProfileError} for anything else. */
export function parseProfileName(profile: string): ProfileName {
  if (!isProfileName(profile))
    throw new UnknownProfileError({ profile, expected: PROFILE_NAMES });
  return profile;
}

/**
 * The backends in scope for `profile`: the profile's own plus `core`, in
 * table order.
 */
export function backendsForProfile(
  profile: ProfileName,
): readonly BackendDefinition[] {
  return DEFAULT_BACKENDS.filter(
    (entry) => entry.profile === 'core' || entry.profile === profile,
  );
}
