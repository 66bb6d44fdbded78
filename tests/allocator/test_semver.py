"""Semantic versions as Kubernetes parses them (blang/semver Parse and CEL semver(s, true)).

The expected errors were produced by k8s.io/apiserver v0.37.2's CEL semver library.
"""

import pytest

from allocator.semver import Semver, SemverError, is_semver, parse_semver

# text, normalize, upstream error (None: valid)
PARSE_CASES = [
    ('1.2.3', False, None),
    ('1.2.3', True, None),
    ('v1.2.3', False, 'Invalid character(s) found in major number "v1"'),
    ('v1.2.3', True, None),
    ('1.2', False, 'No Major.Minor.Patch elements found'),
    ('1.2', True, None),
    ('1', False, 'No Major.Minor.Patch elements found'),
    ('1', True, None),
    ('01.2.3', False, 'Major number must not contain leading zeroes "01"'),
    ('01.2.3', True, None),
    ('1.02.3', False, 'Minor number must not contain leading zeroes "02"'),
    ('1.02.3', True, None),
    ('1.2.03', False, 'Patch number must not contain leading zeroes "03"'),
    ('1.2.03', True, None),
    ('1.2.3-alpha', False, None),
    ('1.2.3-alpha', True, None),
    ('1.2.3-alpha.1', False, None),
    ('1.2.3-alpha.1', True, None),
    ('1.2.3-01', False, 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ('1.2.3-01', True, 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ('1.2.3-0', False, None),
    ('1.2.3-0', True, None),
    ('1.2.3-a..b', False, 'Prerelease is empty'),
    ('1.2.3-a..b', True, 'Prerelease is empty'),
    ('1.2.3-', False, 'Prerelease is empty'),
    ('1.2.3-', True, 'Prerelease is empty'),
    ('1.2.3+', False, 'Build meta data is empty'),
    ('1.2.3+', True, 'Build meta data is empty'),
    ('1.2.3+b.', False, 'Build meta data is empty'),
    ('1.2.3+b.', True, 'Build meta data is empty'),
    ('1.2.3+b.c-d', False, None),
    ('1.2.3+b.c-d', True, None),
    ('1.2.3-rc.1+build.5', False, None),
    ('1.2.3-rc.1+build.5', True, None),
    ('1.2.3+meta-data', False, None),
    ('1.2.3+meta-data', True, None),
    ('1.2.3-x_y', False, 'Invalid character(s) found in prerelease "x_y"'),
    ('1.2.3-x_y', True, 'Invalid character(s) found in prerelease "x_y"'),
    ('1.2.3+x_y', False, 'Invalid character(s) found in build meta data "x_y"'),
    ('1.2.3+x_y', True, 'Invalid character(s) found in build meta data "x_y"'),
    ('', False, 'Version string empty'),
    ('', True, 'strconv.ParseUint: parsing "": invalid syntax'),
    ('a.b.c', False, 'Invalid character(s) found in major number "a"'),
    ('a.b.c', True, 'Invalid character(s) found in major number "a"'),
    ('1.2.c', False, 'Invalid character(s) found in patch number "c"'),
    ('1.2.c', True, 'Invalid character(s) found in patch number "c"'),
    ('1..3', False, 'strconv.ParseUint: parsing "": invalid syntax'),
    ('1..3', True, 'strconv.ParseUint: parsing "": invalid syntax'),
    ('18446744073709551616.0.0', False, 'strconv.ParseUint: parsing "18446744073709551616": value out of range'),
    ('18446744073709551616.0.0', True, 'strconv.ParseUint: parsing "18446744073709551616": value out of range'),
    ('18446744073709551615.0.0', False, None),
    ('18446744073709551615.0.0', True, None),
    ('v1.0', False, 'No Major.Minor.Patch elements found'),
    ('v1.0', True, None),
    ('v1', False, 'No Major.Minor.Patch elements found'),
    ('v1', True, None),
    ('v', False, 'No Major.Minor.Patch elements found'),
    ('v', True, 'strconv.ParseUint: parsing "": invalid syntax'),
    ('1.0-beta', False, 'No Major.Minor.Patch elements found'),
    ('1.0-beta', True, 'short version cannot contain PreRelease/Build meta data'),
    ('1.2.3.4', False, 'Invalid character(s) found in patch number "3.4"'),
    ('1.2.3.4', True, 'Invalid character(s) found in patch number "3.4"'),
    ('1.2.3-beta.2.x', False, None),
    ('1.2.3-beta.2.x', True, None),
    ('00.0.0', False, 'Major number must not contain leading zeroes "00"'),
    ('00.0.0', True, None),
    ('1.2.00-01', False, 'Patch number must not contain leading zeroes "00"'),
    ('1.2.00-01', True, 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ('v01.02.03', False, 'Invalid character(s) found in major number "v01"'),
    ('v01.02.03', True, None),
    ('1.2.3 ', False, 'Invalid character(s) found in patch number "3 "'),
    ('1.2.3 ', True, 'Invalid character(s) found in patch number "3 "'),
    ('1.2.-3', False, 'strconv.ParseUint: parsing "": invalid syntax'),
    ('1.2.-3', True, None),
    ('1.2.3--', False, None),
    ('1.2.3--', True, None),
    ('1.2.3-+', False, 'Prerelease is empty'),
    ('1.2.3-+', True, 'Prerelease is empty'),
]


@pytest.mark.parametrize(("text", "normalize", "error"), PARSE_CASES)
def test_parse_matches_upstream(text, normalize, error):
    if error is None:
        assert isinstance(parse_semver(text, normalize), Semver)
        assert is_semver(text, normalize)
    else:
        with pytest.raises(SemverError) as raised:
            parse_semver(text, normalize)
        assert str(raised.value) == error
        assert not is_semver(text, normalize)


def test_components_and_string_form():
    version = parse_semver("1.2.3-rc.1+build.5")
    assert (version.major, version.minor, version.patch) == (1, 2, 3)
    assert version.prerelease == ("rc", "1")
    assert version.build == ("build", "5")
    assert str(version) == "1.2.3-rc.1+build.5"
    assert str(parse_semver("v01.2", normalize=True)) == "1.2.0"


# Precedence from the SemVer 2.0.0 specification, lowest first.
ORDERED = [
    "1.0.0-1",
    "1.0.0-A",
    "1.0.0-a-b",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
    "1.0.1",
    "1.1.0",
    "2.0.0",
]


def test_prerelease_ordering():
    versions = [parse_semver(text) for text in ORDERED]
    assert sorted(reversed(versions)) == versions
    for lower, higher in zip(versions, versions[1:]):
        assert lower.compare(higher) == -1
        assert higher.compare(lower) == 1
        assert lower < higher and higher > lower


def test_build_metadata_is_ignored_for_precedence():
    plain, built = parse_semver("1.0.0"), parse_semver("1.0.0+build.7")
    assert plain == built
    assert hash(plain) == hash(built)
    assert plain.compare(built) == 0


def test_numbers_beyond_int64_are_kept():
    assert parse_semver("18446744073709551615.0.0").major == 2**64 - 1
