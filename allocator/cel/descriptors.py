"""The types the checker knows beyond CEL's own: kubernetes.Quantity, kubernetes.Semver and the
device, as protobuf message types.
"""

from __future__ import annotations

from cel_expr_python import cel
from google.protobuf import descriptor_pb2, descriptor_pool, struct_pb2


def _build_pool() -> descriptor_pool.DescriptorPool:
    """Message types for the checker: kubernetes.Quantity, kubernetes.Semver, the device."""
    field = descriptor_pb2.FieldDescriptorProto
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(struct_pb2.DESCRIPTOR.serialized_pb)
    file = descriptor_pb2.FileDescriptorProto(
        name="kubectl_dra/cel.proto",
        package="kubernetes",
        syntax="proto3",
        dependency=["google/protobuf/struct.proto"],
    )
    for name in ("Quantity", "Semver"):
        message = file.message_type.add(name=name)
        message.field.add(name="value", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
    # Only the check environment uses the device messages; at runtime the device is maps.
    # google.protobuf.Struct is CEL's map(string, dyn).
    for device_name, multi in (("DRADevice", False), ("DRADeviceConsumableCapacity", True)):
        device = file.message_type.add(name=device_name)
        device.field.add(name="driver", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
        for number, map_name in ((2, "attributes"), (3, "capacity")):
            entry = device.nested_type.add(name=map_name.capitalize() + "Entry")
            entry.options.map_entry = True
            entry.field.add(name="key", number=1, type=field.TYPE_STRING, label=field.LABEL_OPTIONAL)
            entry.field.add(
                name="value",
                number=2,
                type=field.TYPE_MESSAGE,
                type_name=".google.protobuf.Struct",
                label=field.LABEL_OPTIONAL,
            )
            device.field.add(
                name=map_name,
                number=number,
                type=field.TYPE_MESSAGE,
                type_name=f".kubernetes.{device_name}.{entry.name}",
                label=field.LABEL_REPEATED,
            )
        if multi:
            device.field.add(
                name="allowMultipleAllocations", number=4, type=field.TYPE_BOOL, label=field.LABEL_OPTIONAL
            )
    pool.Add(file)
    return pool


DESCRIPTOR_POOL = _build_pool()


CelType = cel.Type
QUANTITY_TYPE = CelType("kubernetes.Quantity")
SEMVER_TYPE = CelType("kubernetes.Semver")
