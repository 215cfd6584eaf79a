"""What a SPIR-V module needs from a Vulkan device, and which optional device features the
native host enables.

`spirv_capabilities` reads the `OpCapability` instructions of a binary (SPIR-V's own
declaration of what the module uses); `CAPABILITY_REQUIREMENTS` maps each capability to
the Vulkan feature (a field of one of the `OPTIONAL_FEATURES` structs) or the subgroup
operation class (`VkPhysicalDeviceSubgroupProperties.supportedOperations`) that allows it.
A capability not in the table (`Shader`) needs nothing beyond Vulkan 1.1. Subgroup
operations on f16 values also need `shaderSubgroupExtendedTypes`, which no capability
names: the device enables it where it has it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

__all__ = [
    "OptionalFeature",
    "OPTIONAL_FEATURES",
    "CORE_FEATURES",
    "CAPABILITY_REQUIREMENTS",
    "CAPABILITY_WGPU_FEATURES",
    "SPIRV_VULKAN_VERSIONS",
    "spirv_capabilities",
    "spirv_version",
]


@dataclass(frozen=True)
class OptionalFeature:
    """Fields of one Vulkan feature struct, enabled where the device has them: the struct
    is core from `core` (major, minor) or comes with the device extension `extension`."""

    struct: str  # the vulkan package's constructor name
    fields: tuple
    core: tuple | None
    extension: str | None


OPTIONAL_FEATURES = (
    OptionalFeature(
        "VkPhysicalDevice16BitStorageFeatures",
        ("storageBuffer16BitAccess", "uniformAndStorageBuffer16BitAccess"),
        (1, 1),
        "VK_KHR_16bit_storage",
    ),
    OptionalFeature(
        "VkPhysicalDeviceShaderFloat16Int8Features",
        ("shaderFloat16",),
        (1, 2),
        "VK_KHR_shader_float16_int8",
    ),
    OptionalFeature(
        "VkPhysicalDeviceUniformBufferStandardLayoutFeatures",
        ("uniformBufferStandardLayout",),
        (1, 2),
        "VK_KHR_uniform_buffer_standard_layout",
    ),
    OptionalFeature(
        "VkPhysicalDeviceShaderSubgroupExtendedTypesFeatures",
        ("shaderSubgroupExtendedTypes",),
        (1, 2),
        "VK_KHR_shader_subgroup_extended_types",
    ),
    OptionalFeature(
        "VkPhysicalDeviceShaderAtomicFloatFeaturesEXT",
        ("shaderBufferFloat32Atomics", "shaderBufferFloat32AtomicAdd"),
        None,
        "VK_EXT_shader_atomic_float",
    ),
    # Not for kernels: `VulkanDevice.pipeline_statistics` (registers, instructions, ... of
    # the driver's compiled code, where the driver reports them).
    OptionalFeature(
        "VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR",
        ("pipelineExecutableInfo",),
        None,
        "VK_KHR_pipeline_executable_properties",
    ),
)

#: The Vulkan 1.0 features enabled where the device has them: out-of-bounds accesses stay
#: inside the buffer (as wgpu's bounds checks keep them).
CORE_FEATURES = ("robustBufferAccess",)

# SPIR-V capability -> what allows it: ('feature', field of OPTIONAL_FEATURES) or
# ('subgroup', VkSubgroupFeatureFlagBits name). Capabilities not listed are always there.
CAPABILITY_REQUIREMENTS = {
    "Float16": ("feature", "shaderFloat16"),
    "StorageBuffer16BitAccess": ("feature", "storageBuffer16BitAccess"),
    "UniformAndStorageBuffer16BitAccess": ("feature", "uniformAndStorageBuffer16BitAccess"),
    "AtomicFloat32AddEXT": ("feature", "shaderBufferFloat32AtomicAdd"),
    "GroupNonUniform": ("subgroup", "VK_SUBGROUP_FEATURE_BASIC_BIT"),
    "GroupNonUniformVote": ("subgroup", "VK_SUBGROUP_FEATURE_VOTE_BIT"),
    "GroupNonUniformArithmetic": ("subgroup", "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT"),
    "GroupNonUniformBallot": ("subgroup", "VK_SUBGROUP_FEATURE_BALLOT_BIT"),
    "GroupNonUniformShuffle": ("subgroup", "VK_SUBGROUP_FEATURE_SHUFFLE_BIT"),
    "GroupNonUniformShuffleRelative": ("subgroup", "VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT"),
    "GroupNonUniformClustered": ("subgroup", "VK_SUBGROUP_FEATURE_CLUSTERED_BIT"),
    "GroupNonUniformQuad": ("subgroup", "VK_SUBGROUP_FEATURE_QUAD_BIT"),
}

# The wgpu feature whose first use in the kernel `interface.features` locates, per capability
# (for the Python line in a FeatureError).
CAPABILITY_WGPU_FEATURES = {
    "Float16": "shader-f16",
    "StorageBuffer16BitAccess": "shader-f16",
    "UniformAndStorageBuffer16BitAccess": "shader-f16",
    "AtomicFloat32AddEXT": "shader-float32-atomic",
}

OP_CAPABILITY, OP_MEMORY_MODEL = 17, 14
SPIRV_MAGIC = 0x07230203


def spirv_capabilities(binary: bytes) -> list[str]:
    """The `OpCapability` operands of a SPIR-V binary, by name."""
    from ..backend_spirv.grammar import ENUMS

    names = {}
    for name, value in ENUMS["Capability"].items():
        names.setdefault(value, name)  # the grammar's first name, not a later alias
    if len(binary) < 20 or len(binary) % 4:
        raise ValueError(f"not a SPIR-V binary ({len(binary)} bytes)")
    words = struct.unpack(f"<{len(binary) // 4}I", binary)
    if words[0] != SPIRV_MAGIC:
        raise ValueError(f"not a SPIR-V binary (magic number {words[0]:#010x})")
    found = []
    position = 5
    while position < len(words):
        count, opcode = words[position] >> 16, words[position] & 0xFFFF
        if opcode == OP_MEMORY_MODEL or count == 0:
            break
        if opcode == OP_CAPABILITY:
            found.append(names.get(words[position + 1], str(words[position + 1])))
        position += count
    return found


def spirv_version(binary: bytes) -> tuple:
    """(major, minor) of a SPIR-V binary's header."""
    word = struct.unpack_from("<I", binary, 4)[0]
    return (word >> 16) & 0xFF, (word >> 8) & 0xFF


# The Vulkan version a SPIR-V version needs (Vulkan 1.1 reads SPIR-V up to 1.3).
SPIRV_VULKAN_VERSIONS = {(1, 4): (1, 2), (1, 5): (1, 2), (1, 6): (1, 3)}
