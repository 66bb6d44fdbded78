"""DRA selector CEL semantics.

Expected results and messages were checked against k8s.io/dynamic-resource-allocation
v0.37.2 (cel.GetCompiler(...).CompileCELExpression + DeviceMatches).
"""

import itertools
import random

import pytest

from allocator.cel import CelCompileError, CelRuntimeError, DeviceView, SelectorCompiler
from allocator.quantity import parse_quantity
from allocator.semver import parse_semver

DRIVER = "gpu.example.com"


def gpu(**overrides) -> DeviceView:
    device = DeviceView(
        driver=DRIVER,
        attributes={
            "model": "H100",
            "count": 8,
            "ok": True,
            "cc": parse_semver("8.0.0"),
            "driverVersion": parse_semver("1.2.3-rc.1+b5"),
            "other.com/x": 1,
            "models": ["a", "b"],
            "nums": [1, 2, 3],
            "versions": [parse_semver("1.0.0"), parse_semver("2.0.0-alpha")],
        },
        capacity={
            "memory": parse_quantity("80Gi"),
            "frac": parse_quantity("1.5Gi"),
            "milli": parse_quantity("1500m"),
            "other.com/slots": parse_quantity("4"),
        },
        allow_multiple_allocations=True,
    )
    for key, value in overrides.items():
        setattr(device, key, value)
    return device


@pytest.fixture(scope="module")
def compiler() -> SelectorCompiler:
    return SelectorCompiler(consumable_capacity=True, list_attributes=True)


def evaluate(compiler: SelectorCompiler, expression: str, device: DeviceView | None = None) -> bool:
    return compiler.compile(expression).matches(device or gpu())


MATCHES = [
    # the typical selector
    'device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "H100" '
    '&& device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
    # an unknown domain is an empty map
    'has(device.attributes["other.com"].x)',
    '!has(device.attributes["unknown.com"].x)',
    'size(device.capacity["unknown.com"]) == 0',
    'device.attributes["unknown.com"].?x.orValue("none") == "none"',
    'device.attributes[?"unknown.com"].hasValue()',
    "has(device.attributes.unknown)",
    "!has(device.attributes.unknown.x)",
    "size(device.attributes) == 2",
    '"other.com" in device.attributes && !("unknown.com" in device.attributes)',
    'device.attributes.exists(d, d == "other.com")',
    # short-circuit past errors
    '!(false && device.attributes["gpu.example.com"].missing == 1)',
    'device.attributes["gpu.example.com"].missing == 1 || true',
    # quantities
    'device.capacity["gpu.example.com"].memory == quantity("81920Mi")',
    'device.capacity["gpu.example.com"].frac == quantity("1536Mi")',
    'device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("79Gi"))',
    'device.capacity["gpu.example.com"].memory.isLessThan(quantity("81Gi"))',
    'device.capacity["other.com"].slots.asInteger() == 4',
    'device.capacity["gpu.example.com"].milli.asApproximateFloat() == 1.5',
    '!device.capacity["gpu.example.com"].milli.isInteger()',
    'quantity("50k").add(20).sub(quantity("100k")).sub(-50000) == quantity("20")',
    'quantity("50k").add(quantity("20")) == quantity("50.02k")',
    'quantity("200M").compareTo(quantity("0.2G")) == 0',
    'quantity("50M").compareTo(quantity("50Mi")) == -1',
    'sign(quantity("-1m")) == -1 && sign(quantity("0")) == 0',
    'isQuantity("1.3Gi") && !isQuantity("200K")',
    '!quantity("9999999999999999999999999999999999999G").isInteger()',
    # versions
    'device.attributes["gpu.example.com"].cc.isGreaterThan(semver("7.5.0"))',
    'device.attributes["gpu.example.com"].driverVersion.isLessThan(semver("1.2.3"))',
    'device.attributes["gpu.example.com"].driverVersion == semver("1.2.3-rc.1")',
    'device.attributes["gpu.example.com"].driverVersion.compareTo(semver("1.2.3-beta")) == 1',
    'semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta"))',
    'semver("v1.0", true) == semver("1.0.0") && semver("1.2.3").major() == 1 '
    '&& semver("1.2.3").minor() == 2 && semver("1.2.3").patch() == 3',
    '!isSemver("v1.0") && isSemver("v1.0", true) && !isSemver("1.0-beta", true)',
    # includes() on scalars and lists
    'device.attributes["gpu.example.com"].models.includes("b")',
    '!device.attributes["gpu.example.com"].models.includes("c")',
    'device.attributes["gpu.example.com"].model.includes("H100")',
    'device.attributes["gpu.example.com"].nums.includes(2)',
    'device.attributes["gpu.example.com"].versions.includes(semver("2.0.0-alpha"))',
    'device.attributes["gpu.example.com"].models.exists(m, m == "a")',
    # bindings, optionals, strings, regex, cross-type numbers
    'cel.bind(g, device.attributes["gpu.example.com"], g.ok && g.count > 4)',
    'device.attributes["gpu.example.com"].?missing.orValue("x") == "x"',
    'device.attributes["gpu.example.com"].model.lowerAscii() == "h100"',
    'device.attributes["gpu.example.com"].model.matches("^H[0-9]+$")',
    '"a,b".split(",").size() == 2 && ["a", "b"].join("-") == "a-b"',
    '"  x ".trim() == "x" && "abc".indexOf("c") == 2 && "abc".substring(1) == "bc"',
    'device.attributes["gpu.example.com"].count > 1.5',
    "device.allowMultipleAllocations",
]


@pytest.mark.parametrize("expression", MATCHES)
def test_expressions_match(compiler, expression):
    assert evaluate(compiler, expression) is True


RUNTIME_ERRORS = [
    ('device.attributes["gpu.example.com"].missing == 1', "no such key: missing"),
    ('device.attributes["unknown.com"].model == "x"', "no such key: model"),
    ("device.attributes.unknown.x == 1", "no such key: x"),
    (
        'device.attributes["gpu.example.com"].model',
        "CEL result of type string could not be converted to bool: "
        "unsupported native conversion from string to 'bool'",
    ),
    (
        'device.attributes["gpu.example.com"].count',
        "CEL result of type int could not be converted to bool: unsupported type conversion from 'int' to bool",
    ),
    (
        'dyn(quantity("1"))',
        "CEL result of type kubernetes.Quantity could not be converted to bool: "
        "type conversion error from 'Quantity' to 'bool'",
    ),
    (
        'quantity("10Mo").isInteger()',
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ),
    ('quantity("10Mm").isInteger()', "unable to parse quantity's suffix"),
    ('quantity("9999999999999999999999999999999999999G").asInteger() == 1', "cannot convert value to integer"),
    ('semver("1.0") == semver("1.0.0")', "No Major.Minor.Patch elements found"),
    ('semver("1.0.0-01") == semver("1.0.0")', 'Numeric PreRelease version must not contain leading zeroes "01"'),
    ("[1][5] == 1", "index out of bounds: 5"),
    ("1 / 0 == 1", "division by zero"),
]


@pytest.mark.parametrize(("expression", "message"), RUNTIME_ERRORS)
def test_runtime_errors(compiler, expression, message):
    with pytest.raises(CelRuntimeError) as raised:
        evaluate(compiler, expression)
    assert str(raised.value) == message


def test_missing_attribute_of_a_device_without_any(compiler):
    bare = DeviceView(driver="dra.example.com")
    assert evaluate(compiler, 'size(device.attributes["dra.example.com"]) == 0', bare)
    assert evaluate(compiler, "size(device.attributes[device.driver]) == 0", bare)
    with pytest.raises(CelRuntimeError, match="^no such key: model$"):
        evaluate(compiler, 'device.attributes["dra.example.com"].model == "a"', bare)


COMPILE_ERRORS = [
    (
        "foo(1)",
        "compilation failed: ERROR: <input>:1:4: undeclared reference to 'foo' (in container '')\n"
        " | foo(1)\n | ...^",
    ),
    (
        '"a" > 1',
        "compilation failed: ERROR: <input>:1:5: found no matching overload for '_>_' applied to '(string, int)'\n"
        ' | "a" > 1\n | ....^',
    ),
    (
        "1.compareTo(2) == 0",
        "compilation failed: ERROR: <input>:1:12: found no matching overload for 'compareTo' applied to "
        "'int.(int)'\n | 1.compareTo(2) == 0\n | ...........^",
    ),
    (
        'quantity("1").compareTo(1) == 0',
        "compilation failed: ERROR: <input>:1:24: found no matching overload for 'compareTo' applied to "
        "'kubernetes.Quantity.(int)'\n | quantity(\"1\").compareTo(1) == 0\n | .......................^",
    ),
    (
        "device.foo",
        "compilation failed: ERROR: <input>:1:7: undefined field 'foo'\n | device.foo\n | ......^",
    ),
    ("1", "must evaluate to bool or the unknown type, not int"),
    ("device.driver", "must evaluate to bool or the unknown type, not string"),
    ('device.attributes["gpu.example.com"]', "must evaluate to bool or the unknown type, not map(string, dyn)"),
    (
        'device.capacity["gpu.example.com"].memory',
        "must evaluate to bool or the unknown type, not kubernetes.Quantity",
    ),
]


@pytest.mark.parametrize(("expression", "message"), COMPILE_ERRORS)
def test_compile_errors(compiler, expression, message):
    with pytest.raises(CelCompileError) as raised:
        compiler.compile(expression)
    assert str(raised.value) == message


def test_quantity_capacity_cannot_be_compared_with_an_int(compiler):
    with pytest.raises(CelCompileError, match="found no matching overload for '_==_'"):
        compiler.compile('device.capacity["gpu.example.com"].memory == 1')


def test_feature_flags_declare_fields_and_functions():
    plain = SelectorCompiler(consumable_capacity=False, list_attributes=False)
    with pytest.raises(CelCompileError, match="undefined field 'allowMultipleAllocations'"):
        plain.compile("device.allowMultipleAllocations")
    with pytest.raises(CelCompileError, match="undeclared reference to 'includes'"):
        plain.compile('device.attributes["d"].x.includes(1)')
    # Without the field the device's allowMultipleAllocations does not matter.
    selector = plain.compile('device.driver == "gpu.example.com"')
    assert selector.fingerprint(gpu()) == selector.fingerprint(gpu(allow_multiple_allocations=False))


def test_includes_refuses_long_lists(compiler):
    device = gpu(attributes={"many": list(range(49))})
    with pytest.raises(CelRuntimeError, match="cannot be applied to lists longer than 48 values"):
        evaluate(compiler, 'device.attributes["gpu.example.com"].many.includes(100)', device)
    assert evaluate(compiler, 'device.attributes["gpu.example.com"].many.includes(3)', device)


def test_compile_is_memoised_including_errors(compiler):
    assert compiler.compile("true") is compiler.compile("true")
    with pytest.raises(CelCompileError) as first:
        compiler.compile("nope(")
    with pytest.raises(CelCompileError) as second:
        compiler.compile("nope(")
    assert first.value is second.value
    assert compiler.compile("true").expression == "true"


def test_device_is_converted_once_and_changes_with_the_object(compiler):
    selector = compiler.compile('device.attributes["gpu.example.com"].model == "H100"')
    device = gpu()
    assert compiler.device_data(device) is compiler.device_data(device)
    assert selector.matches(device)
    assert not selector.matches(gpu(attributes={"model": "A100"}))


def test_qualified_names_in_the_driver_domain(compiler):
    device = gpu(attributes={"gpu.example.com/model": "H100"})
    assert evaluate(compiler, 'device.attributes["gpu.example.com"].model == "H100"', device)


# --- fingerprints ----------------------------------------------------------------------

FINGERPRINT_EXPRESSIONS = [
    'device.attributes["gpu.example.com"].model == "H100"',
    'has(device.attributes["gpu.example.com"].model)',
    'device.attributes["gpu.example.com"].?model.orValue("none") == "none"',
    'device.attributes[device.driver].model == "H100"',
    'cel.bind(g, device.attributes["gpu.example.com"], g.model == "H100" || g.count > 3)',
    'cel.bind(g, device.attributes["gpu.example.com"], g == {"model": "H100"})',
    'size(device.attributes["gpu.example.com"]) == 1',
    '"model" in device.attributes["gpu.example.com"]',
    'device.attributes["gpu.example.com"].exists(n, n == "count")',
    'device.attributes["gpu.example.com"]["mo" + "del"] == "H100"',
    'device.attributes["gpu." + "example.com"].model == "H100"',
    'device.attributes.all(d, size(device.attributes[d]) < 2)',
    'device.attributes["other.com"].model == "H100"',
    'has(device.attributes["other.com"].count)',
    'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
    'device.capacity["gpu.example.com"].memory.isInteger()',
    'device.attributes["gpu.example.com"].tags.includes("a")',
    "device.allowMultipleAllocations",
    'dyn(device.attributes["gpu.example.com"]) == {}',
    'device.attributes.?zzz.orValue({}).size() == 0',
]

NAMES = ["model", "count", "tags"]
VALUES = ["H100", "A100", 3, True, ["a"], ["b"], parse_semver("1.0.0")]
CAPACITIES = [parse_quantity("40Gi"), parse_quantity("40960Mi"), parse_quantity("1.5Gi")]


def random_devices(rng: random.Random, count: int) -> list[DeviceView]:
    """Devices drawn from a small pool, each with unreferenced noise and a shuffled dict
    order, so that equal fingerprints occur both for bounded and unbounded selectors."""
    pool = []
    for _ in range(40):
        attributes = {}
        for name in NAMES:
            for domain in ("", "other.com/", "gpu.example.com/"):
                if rng.random() < 0.25:
                    attributes[domain + name] = rng.choice(VALUES)
        capacity = {name: rng.choice(CAPACITIES) for name in ("memory", "other.com/memory") if rng.random() < 0.6}
        pool.append((rng.choice([DRIVER, "other.com"]), attributes, capacity, rng.random() < 0.5))
    devices = []
    for _ in range(count):
        driver, attributes, capacity, multi = rng.choice(pool)
        attributes = dict(attributes)
        if rng.random() < 0.5:
            attributes["serial"] = rng.choice(["1", "2"])
        items = list(attributes.items())
        rng.shuffle(items)
        devices.append(DeviceView(driver, dict(items), dict(capacity), multi))
    return devices


def outcome(selector, device):
    try:
        return selector.matches(device)
    except CelRuntimeError as error:
        return str(error)


@pytest.mark.parametrize("expression", FINGERPRINT_EXPRESSIONS)
def test_equal_fingerprints_imply_equal_outcomes(compiler, expression):
    rng = random.Random(expression)
    selector = compiler.compile(expression)
    seen = {}
    collisions = 0
    for device in random_devices(rng, 400):
        key = selector.fingerprint(device)
        result = outcome(selector, device)
        if key in seen:
            collisions += 1
            assert seen[key] == result, f"{expression}: {device}"
        seen[key] = result
    # The test only proves something if devices actually share fingerprints.
    assert collisions > 0


@pytest.mark.parametrize("expression", FINGERPRINT_EXPRESSIONS)
def test_only_what_an_expression_reads_is_keyed(compiler, expression):
    """The entries a fingerprint keys are exactly those of the device's whole split (kept per
    device) that the expression can read, in the same order: keying only those is a shortcut."""
    selector = compiler.compile(expression)
    reach = selector._reach
    if reach.names is None:
        return
    for device in random_devices(random.Random(expression), 100):
        whole = compiler.split_entries(device)
        read = tuple(p for p in whole if p[2] in reach.names and (p[1] in reach.domains or p[1] == device.driver))
        assert compiler.split_entries(device, reach.names, reach.domains) == read


def test_fingerprint_ignores_unreferenced_names(compiler):
    selector = compiler.compile('device.attributes["gpu.example.com"].model == "H100"')
    a = gpu(attributes={"model": "H100", "serial": "1"})
    b = gpu(attributes={"model": "H100", "serial": "2"})
    assert selector.fingerprint(a) == selector.fingerprint(b)
    assert selector.fingerprint(a) != selector.fingerprint(gpu(attributes={"model": "A100", "serial": "1"}))


@pytest.mark.parametrize(
    "expression",
    [
        'size(device.attributes["gpu.example.com"]) == 2',
        'device.attributes["gpu.example.com"].exists(n, n == "serial")',
        'cel.bind(g, device.attributes["gpu.example.com"], g == {"model": "H100"})',
    ],
)
def test_fingerprint_covers_everything_when_the_map_is_observed(compiler, expression):
    selector = compiler.compile(expression)
    a = gpu(attributes={"model": "H100", "serial": "1"})
    b = gpu(attributes={"model": "H100", "serial": "2"})
    assert selector.fingerprint(a) != selector.fingerprint(b)


def test_fingerprint_distinguishes_types(compiler):
    selector = compiler.compile('device.attributes["gpu.example.com"].flag == true')
    assert selector.fingerprint(gpu(attributes={"flag": True})) != selector.fingerprint(gpu(attributes={"flag": 1}))


def test_all_pairs_of_small_devices(compiler):
    """Exhaustive over a tiny space: equal fingerprints never disagree."""
    expression = (
        'cel.bind(g, device.attributes["gpu.example.com"], '
        'g.?model.orValue("") == "H100" && has(g.count)) || has(device.attributes["other.com"].model)'
    )
    selector = compiler.compile(expression)
    choices = [None, "H100", 3]
    seen = {}
    for model, count, other, noise in itertools.product(choices, choices, choices, choices):
        attributes = {}
        for name, value in (("model", model), ("count", count), ("other.com/model", other), ("noise", noise)):
            if value is not None:
                attributes[name] = value
        device = DeviceView(driver=DRIVER, attributes=attributes)
        key = selector.fingerprint(device)
        result = outcome(selector, device)
        assert seen.setdefault(key, result) == result
    assert len(seen) < 3**4  # "noise" is not part of the fingerprint
