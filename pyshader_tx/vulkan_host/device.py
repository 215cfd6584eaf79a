"""The native Vulkan device: instance, physical device, logical device and queue, created once
per process through the `vulkan` package (cffi bindings of the system's Vulkan loader).

`get_device()` picks the first physical device with a compute queue and Vulkan 1.1 (SPIR-V
1.3), preferring discrete over integrated over virtual GPUs over CPU drivers (lavapipe);
`PYSHADER_TX_VULKAN_DEVICE=N` picks device N of `vkEnumeratePhysicalDevices` instead. The
logical device gets every optional feature of `capabilities.OPTIONAL_FEATURES` the physical
device has (f16 arithmetic and 16-bit storage, float atomics, standard uniform layout,
subgroup operations on 16-bit types, robust buffer access), as the wgpu runtime requests
every optional feature it may need. Which of them a kernel needs is read from the SPIR-V
itself: `VulkanDevice.check_spirv` maps each `OpCapability` of a binary to the Vulkan
feature (or subgroup operation class) that allows it, and raises `FeatureError` naming the
missing one.

`pipeline_for` caches compute pipelines (with their shader module, descriptor set layout
and pipeline layout) by SPIR-V bytes, entry point and binding layout; the cache is bounded
and destroys what it evicts. Every Vulkan object is destroyed by `close()` (also at exit).

`PYSHADER_TX_VULKAN_VALIDATION=1` enables the Khronos validation layer (Debian:
vulkan-validationlayers): every error or warning it reports while a pipeline is made or a
dispatch runs is raised as a `VulkanValidationError` (the test suite sets it where the
layer is installed, so every native launch of the tests is validated).
"""

from __future__ import annotations

import atexit
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from ..errors import FeatureError
from .capabilities import (
    CAPABILITY_REQUIREMENTS,
    CAPABILITY_WGPU_FEATURES,
    CORE_FEATURES,
    OPTIONAL_FEATURES,
    SPIRV_VULKAN_VERSIONS,
    spirv_capabilities,
    spirv_version,
)

__all__ = [
    "VulkanUnavailable",
    "VulkanValidationError",
    "validation_layer_available",
    "VulkanDevice",
    "get_device",
    "close",
]

#: Pipelines kept per device (a pipeline holds compiled machine code; lavapipe's take long to
#: create, so the test suite keeps all of its kernels).
PIPELINE_CACHE_SIZE = 512

DEVICE_ENV = "PYSHADER_TX_VULKAN_DEVICE"
VALIDATION_ENV = "PYSHADER_TX_VULKAN_VALIDATION"
VALIDATION_LAYER = "VK_LAYER_KHRONOS_validation"


class VulkanUnavailable(RuntimeError):
    """No native Vulkan: the `vulkan` package, the loader or a usable device is missing."""


class VulkanValidationError(RuntimeError):
    """The validation layer reported errors or warnings (with PYSHADER_TX_VULKAN_VALIDATION)."""


def _import_vulkan():
    try:
        import vulkan
    except ImportError:
        raise VulkanUnavailable(
            "the native Vulkan host needs the 'vulkan' package: pip install 'pyshader_tx[vulkan]'"
        ) from None
    except OSError as error:  # the package found no libvulkan.so.1
        raise VulkanUnavailable(
            f"the 'vulkan' package could not load the Vulkan loader ({error}); install it (Debian:"
            " libvulkan1) and a driver (mesa-vulkan-drivers for lavapipe)"
        ) from None
    return vulkan


# Physical device types, most wanted first.
DEVICE_TYPE_ORDER = (
    "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU",
    "VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU",
    "VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU",
    "VK_PHYSICAL_DEVICE_TYPE_CPU",
    "VK_PHYSICAL_DEVICE_TYPE_OTHER",
)


@dataclass
class Pipeline:
    """A compute pipeline and the objects made for it."""

    module: object
    set_layout: object
    pipeline_layout: object
    pipeline: object
    layout: tuple  # ((binding, kind), ...), kind 'read' | 'read_write' | 'uniform'


@dataclass
class Buffer:
    """A buffer with its memory: host-visible and host-coherent, mapped while it lives (or,
    from `create_device_local_buffer`, device-local and maybe unmapped)."""

    handle: object
    memory: object
    size: int
    mapped: object  # a cffi buffer over the mapping (None: not host-visible)


@dataclass
class VulkanDevice:
    """One instance, physical device, logical device and compute queue (see the module
    docstring). Create it with `get_device()`."""

    vk: object
    instance: object
    physical: object
    device: object
    queue: object
    queue_family: int
    name: str
    api_version: tuple
    features: set  # names of the enabled optional features (fields of OPTIONAL_FEATURES)
    subgroup_operations: set  # VkSubgroupFeatureFlagBits names supported in compute shaders
    subgroup_size: int
    limits: dict
    memory_types: list  # VkMemoryPropertyFlags of each memory type
    command_pool: object = None
    command_buffer: object = None
    fence: object = None
    pipelines: OrderedDict = field(default_factory=OrderedDict)
    lock: threading.RLock = field(default_factory=threading.RLock)
    validation: "Validation | None" = None  # with PYSHADER_TX_VULKAN_VALIDATION=1

    def raise_validation_messages(self, what: str) -> None:
        """Raise what the validation layer reported since the last call, if anything."""
        if self.validation is not None and self.validation.messages:
            messages, self.validation.messages = self.validation.messages, []
            raise VulkanValidationError(
                f"the Vulkan validation layer reports, {what}:\n" + "\n".join(messages)
            )

    # -- features ------------------------------------------------------------------------

    def missing_capability(self, capability: str) -> str | None:
        """What the device lacks for a SPIR-V capability, in words, or None."""
        requirement = CAPABILITY_REQUIREMENTS.get(capability)
        if requirement is None:
            return None
        kind, name = requirement
        if kind == "feature" and name not in self.features:
            return f"the Vulkan feature {name}"
        if kind == "subgroup" and name not in self.subgroup_operations:
            operation = name[len("VK_SUBGROUP_FEATURE_") : -len("_BIT")].lower()
            return f"{operation} subgroup operations in compute shaders ({name})"
        return None

    def check_spirv(self, binary: bytes, kernel: str, locations: dict | None = None) -> None:
        """Raise `FeatureError` when the device cannot run `binary`: its SPIR-V version
        needs a newer Vulkan, or a capability needs a feature the device lacks. The message
        names the capability, the feature and, from `locations` (`interface.features`),
        the Python line that needs it."""
        version = spirv_version(binary)
        needed = SPIRV_VULKAN_VERSIONS.get(version, (1, 1))
        if self.api_version[:2] < needed:
            raise FeatureError(
                f"kernel {kernel!r}: SPIR-V {version[0]}.{version[1]} needs Vulkan "
                f"{needed[0]}.{needed[1]}, but {self.name!r} has Vulkan "
                f"{self.api_version[0]}.{self.api_version[1]}"
            )
        for capability in spirv_capabilities(binary):
            missing = self.missing_capability(capability)
            if missing is None:
                continue
            wgpu_feature = CAPABILITY_WGPU_FEATURES.get(capability, "subgroup")
            where = (locations or {}).get(wgpu_feature)
            prefix = f"{where[0]}:{where[1]}: " if where else ""
            raise FeatureError(
                f"{prefix}kernel {kernel!r} needs the SPIR-V capability {capability}, but the"
                f" Vulkan device {self.name!r} does not support {missing}"
            )

    # -- buffers -------------------------------------------------------------------------

    def create_buffer(self, size: int, usage: int) -> Buffer:
        """A host-visible buffer of `size` bytes (mapped)."""
        return self._buffer(size, usage, self._host_visible_memory)

    def _host_visible_memory(self, allowed_types: int) -> int:
        """The first memory type of `allowed_types` (a bit mask) that is host-visible and
        host-coherent (the spec guarantees one for buffers)."""
        vk = self.vk
        wanted = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        for index, flags in enumerate(self.memory_types):
            if allowed_types & (1 << index) and flags & wanted == wanted:
                return index
        raise VulkanUnavailable(f"{self.name}: no host-visible, host-coherent memory for a buffer")

    def create_device_local_buffer(self, size: int, usage: int) -> Buffer:
        """A buffer of `size` bytes in DEVICE_LOCAL memory, for timing (`timing.py`): the
        first device-local memory type the buffer allows, mapped only where that type is
        also host-visible and host-coherent (lavapipe, resizable BAR), else `mapped` is None
        and its data moves through a staging buffer. It can be copied to and from."""
        vk = self.vk
        usage |= vk.VK_BUFFER_USAGE_TRANSFER_SRC_BIT | vk.VK_BUFFER_USAGE_TRANSFER_DST_BIT
        return self._buffer(size, usage, self._device_local_memory)

    def _device_local_memory(self, allowed_types: int) -> int:
        local = self.vk.VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
        for index, flags in enumerate(self.memory_types):
            if allowed_types & (1 << index) and flags & local:
                return index
        raise VulkanUnavailable(f"{self.name}: no device-local memory for a buffer")

    def _buffer(self, size: int, usage: int, choose_memory) -> Buffer:
        """A buffer of `size` bytes bound to memory of the type `choose_memory(allowed type
        bits)` picks, mapped where that type is host-visible and host-coherent."""
        vk = self.vk
        handle = vk.vkCreateBuffer(
            self.device,
            vk.VkBufferCreateInfo(size=size, usage=usage, sharingMode=vk.VK_SHARING_MODE_EXCLUSIVE),
            None,
        )
        try:
            requirements = vk.vkGetBufferMemoryRequirements(self.device, handle)
            index = choose_memory(requirements.memoryTypeBits)
            memory = vk.vkAllocateMemory(
                self.device,
                vk.VkMemoryAllocateInfo(allocationSize=requirements.size, memoryTypeIndex=index),
                None,
            )
        except Exception:
            vk.vkDestroyBuffer(self.device, handle, None)
            raise
        vk.vkBindBufferMemory(self.device, handle, memory, 0)
        visible = vk.VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | vk.VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
        mapped = None
        if self.memory_types[index] & visible == visible:
            mapped = vk.vkMapMemory(self.device, memory, 0, size, 0)
        return Buffer(handle, memory, size, mapped)

    def destroy_buffer(self, buffer: Buffer) -> None:
        vk = self.vk
        if buffer.mapped is not None:
            vk.vkUnmapMemory(self.device, buffer.memory)
        vk.vkDestroyBuffer(self.device, buffer.handle, None)
        vk.vkFreeMemory(self.device, buffer.memory, None)

    # -- pipelines -----------------------------------------------------------------------

    def pipeline_for(self, binary: bytes, entry_point: str, layout: tuple) -> Pipeline:
        """The compute pipeline of `entry_point` in `binary` with descriptor set 0 laid out
        as `layout` ((binding, 'read' | 'read_write' | 'uniform'), ...), cached."""
        key = (binary, entry_point, layout)
        with self.lock:
            cached = self.pipelines.get(key)
            if cached is not None:
                self.pipelines.move_to_end(key)
                return cached
            pipeline = self._create_pipeline(binary, entry_point, layout)
            try:
                self.raise_validation_messages(f"making the pipeline of {entry_point!r}")
            except VulkanValidationError:
                self._destroy_pipeline(pipeline)
                raise
            self.pipelines[key] = pipeline
            while len(self.pipelines) > PIPELINE_CACHE_SIZE:
                _, evicted = self.pipelines.popitem(last=False)
                self._destroy_pipeline(evicted)
            return pipeline

    def pipeline_statistics(self, binary: bytes, entry_point: str, layout: tuple) -> dict:
        """What the driver reports of the machine code it compiles for `entry_point`
        (VK_KHR_pipeline_executable_properties): {executable name: {statistic: value}},
        e.g. NVIDIA's register count and shared memory. The pipeline is made for this and
        destroyed (not cached). Raises FeatureError where the device does not report."""
        if "pipelineExecutableInfo" not in self.features:
            raise FeatureError(
                f"{self.name} does not report pipeline statistics (the Vulkan extension"
                " VK_KHR_pipeline_executable_properties)"
            )
        vk = self.vk
        flags = vk.VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR
        with self.lock:
            pipeline = self._create_pipeline(binary, entry_point, layout, flags)
            try:
                return self._executable_statistics(pipeline.pipeline)
            finally:
                self._destroy_pipeline(pipeline)

    def _executable_statistics(self, pipeline) -> dict:
        vk, device = self.vk, self.device
        formats = {
            vk.VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: lambda v: bool(v.b32),
            vk.VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: lambda v: v.i64,
            vk.VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: lambda v: v.u64,
            vk.VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_FLOAT64_KHR: lambda v: v.f64,
        }
        found = {}
        executables = _enumerate(
            vk,
            device,
            "vkGetPipelineExecutablePropertiesKHR",
            _struct(
                vk, "VkPipelineInfoKHR", vk.VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, pipeline=pipeline
            ),
            "VkPipelineExecutablePropertiesKHR",
            vk.VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR,
        )
        for index, executable in enumerate(executables):
            statistics = _enumerate(
                vk,
                device,
                "vkGetPipelineExecutableStatisticsKHR",
                _struct(
                    vk,
                    "VkPipelineExecutableInfoKHR",
                    vk.VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
                    pipeline=pipeline,
                    executableIndex=index,
                ),
                "VkPipelineExecutableStatisticKHR",
                vk.VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR,
            )
            found[_text(vk, executable.name) or str(index)] = {
                _text(vk, s.name): formats[s.format](s.value) for s in statistics
            }
        return found

    def _create_pipeline(
        self, binary: bytes, entry_point: str, layout: tuple, flags: int = 0
    ) -> Pipeline:
        vk, device = self.vk, self.device
        descriptor_types = {
            "read": vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            "read_write": vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
            "uniform": vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER,
        }
        created = []  # (destroy function, handle), undone if a later step fails
        try:
            module = vk.vkCreateShaderModule(
                device, vk.VkShaderModuleCreateInfo(codeSize=len(binary), pCode=binary), None
            )
            created.append((vk.vkDestroyShaderModule, module))
            bindings = [
                vk.VkDescriptorSetLayoutBinding(
                    binding=binding,
                    descriptorType=descriptor_types[kind],
                    descriptorCount=1,
                    stageFlags=vk.VK_SHADER_STAGE_COMPUTE_BIT,
                )
                for binding, kind in layout
            ]
            set_layout = vk.vkCreateDescriptorSetLayout(
                device,
                vk.VkDescriptorSetLayoutCreateInfo(
                    bindingCount=len(bindings), pBindings=bindings or None
                ),
                None,
            )
            created.append((vk.vkDestroyDescriptorSetLayout, set_layout))
            pipeline_layout = vk.vkCreatePipelineLayout(
                device,
                vk.VkPipelineLayoutCreateInfo(setLayoutCount=1, pSetLayouts=[set_layout]),
                None,
            )
            created.append((vk.vkDestroyPipelineLayout, pipeline_layout))
            stage = vk.VkPipelineShaderStageCreateInfo(
                stage=vk.VK_SHADER_STAGE_COMPUTE_BIT, module=module, pName=entry_point
            )
            info = vk.VkComputePipelineCreateInfo(stage=stage, layout=pipeline_layout, flags=flags)
            pipeline = vk.vkCreateComputePipelines(device, None, 1, [info], None)[0]
        except Exception:
            for destroy, handle in reversed(created):
                destroy(device, handle, None)
            raise
        return Pipeline(module, set_layout, pipeline_layout, pipeline, layout)

    def _destroy_pipeline(self, pipeline: Pipeline) -> None:
        vk, device = self.vk, self.device
        vk.vkDestroyPipeline(device, pipeline.pipeline, None)
        vk.vkDestroyPipelineLayout(device, pipeline.pipeline_layout, None)
        vk.vkDestroyDescriptorSetLayout(device, pipeline.set_layout, None)
        vk.vkDestroyShaderModule(device, pipeline.module, None)

    # -- submission ----------------------------------------------------------------------

    def dispatch(self, pipeline: Pipeline, buffers: list, counts: tuple) -> None:
        """Bind `buffers` ([(binding, kind, Buffer)]) to set 0, dispatch `counts`
        workgroups, and wait for the queue (the fence)."""
        vk, device = self.vk, self.device
        with self.lock:
            pool, descriptor_set = self.descriptor_set(pipeline, buffers)
            try:
                self._record_and_wait(pipeline, descriptor_set, counts)
            finally:
                vk.vkDestroyDescriptorPool(device, pool, None)
            self.raise_validation_messages("running a dispatch")

    def descriptor_set(self, pipeline: Pipeline, buffers: list) -> tuple:
        """(descriptor pool, descriptor set) of `pipeline`'s set 0 with `buffers` ([(binding,
        kind, Buffer)], kind 'uniform' or a storage access) bound; the caller destroys the
        pool when the set is no longer used."""
        vk = self.vk
        pool = self._descriptor_pool(buffers)
        descriptor_set = vk.vkAllocateDescriptorSets(
            self.device,
            vk.VkDescriptorSetAllocateInfo(
                descriptorPool=pool, descriptorSetCount=1, pSetLayouts=[pipeline.set_layout]
            ),
        )[0]
        writes = [
            vk.VkWriteDescriptorSet(
                dstSet=descriptor_set,
                dstBinding=binding,
                descriptorCount=1,
                descriptorType=(
                    vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                    if kind == "uniform"
                    else vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                ),
                pBufferInfo=[
                    vk.VkDescriptorBufferInfo(buffer=buffer.handle, offset=0, range=buffer.size)
                ],
            )
            for binding, kind, buffer in buffers
        ]
        if writes:
            vk.vkUpdateDescriptorSets(self.device, len(writes), writes, 0, None)
        return pool, descriptor_set

    def _descriptor_pool(self, buffers: list):
        vk = self.vk
        counts = {}
        for _, kind, _ in buffers:
            counts[kind == "uniform"] = counts.get(kind == "uniform", 0) + 1
        sizes = [
            vk.VkDescriptorPoolSize(
                type=(
                    vk.VK_DESCRIPTOR_TYPE_UNIFORM_BUFFER
                    if uniform
                    else vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER
                ),
                descriptorCount=count,
            )
            for uniform, count in counts.items()
        ] or [vk.VkDescriptorPoolSize(type=vk.VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, descriptorCount=1)]
        return vk.vkCreateDescriptorPool(
            self.device,
            vk.VkDescriptorPoolCreateInfo(maxSets=1, poolSizeCount=len(sizes), pPoolSizes=sizes),
            None,
        )

    def _record_and_wait(self, pipeline: Pipeline, descriptor_set, counts: tuple) -> None:
        vk, device, command = self.vk, self.device, self.command_buffer
        vk.vkResetCommandBuffer(command, 0)
        vk.vkBeginCommandBuffer(
            command,
            vk.VkCommandBufferBeginInfo(flags=vk.VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT),
        )
        vk.vkCmdBindPipeline(command, vk.VK_PIPELINE_BIND_POINT_COMPUTE, pipeline.pipeline)
        vk.vkCmdBindDescriptorSets(
            command,
            vk.VK_PIPELINE_BIND_POINT_COMPUTE,
            pipeline.pipeline_layout,
            0,
            1,
            [descriptor_set],
            0,
            None,
        )
        vk.vkCmdDispatch(command, *counts)
        # Make the shader's writes visible to the host's reads of the mapped memory.
        barrier = vk.VkMemoryBarrier(
            srcAccessMask=vk.VK_ACCESS_SHADER_WRITE_BIT, dstAccessMask=vk.VK_ACCESS_HOST_READ_BIT
        )
        vk.vkCmdPipelineBarrier(
            command,
            vk.VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
            vk.VK_PIPELINE_STAGE_HOST_BIT,
            0,
            1,
            [barrier],
            0,
            None,
            0,
            None,
        )
        vk.vkEndCommandBuffer(command)
        vk.vkResetFences(device, 1, [self.fence])
        submit = vk.VkSubmitInfo(commandBufferCount=1, pCommandBuffers=[command])
        vk.vkQueueSubmit(self.queue, 1, [submit], self.fence)
        vk.vkWaitForFences(device, 1, [self.fence], vk.VK_TRUE, 2**64 - 1)

    # -- teardown ------------------------------------------------------------------------

    def destroy(self) -> None:
        """Destroy every object this device made, the device and the instance."""
        vk, device = self.vk, self.device
        with self.lock:
            vk.vkDeviceWaitIdle(device)
            while self.pipelines:
                self._destroy_pipeline(self.pipelines.popitem()[1])
            vk.vkDestroyFence(device, self.fence, None)
            vk.vkDestroyCommandPool(device, self.command_pool, None)
            vk.vkDestroyDevice(device, None)
            if self.validation is not None:
                self.validation.destroy(vk, self.instance)
            vk.vkDestroyInstance(self.instance, None)


# -- creation ------------------------------------------------------------------------------

_lock = threading.Lock()
_device: VulkanDevice | None = None


def get_device() -> VulkanDevice:
    """The native Vulkan device, created on first use (raises `VulkanUnavailable`)."""
    global _device
    if _device is None:
        with _lock:
            if _device is None:
                _device = _create_device()
                atexit.register(close)
    return _device


def close() -> None:
    """Destroy the native device and everything made on it (a later use makes a new one)."""
    global _device
    with _lock:
        if _device is not None:
            device, _device = _device, None
            device.destroy()


def _enumerate(vk, device, function: str, info, ctype: str, stype: int):
    """The structs a device extension's two-call enumeration (count, then fill) returns,
    as a cdata array (which owns them), through the raw function (the package's wrapper
    leaves the structs' sType unset)."""
    from vulkan import _vulkan

    address = _vulkan._callApi(_vulkan.lib.vkGetDeviceProcAddr, device, function)
    if address == vk.ffi.NULL:
        raise FeatureError(f"the Vulkan driver has no {function}")
    raw = vk.ffi.cast("PFN_" + function, address)
    count = vk.ffi.new("uint32_t*")
    _check(vk, raw(device, info, count, vk.ffi.NULL), function)
    items = vk.ffi.new(ctype + "[]", count[0])
    for item in items:
        item.sType = stype
    _check(vk, raw(device, info, count, items), function)
    return items


def _struct(vk, ctype: str, stype: int, **fields):
    """A new `ctype*` with its sType and `fields` (pNext NULL), owned by the returned cdata."""
    pointer = vk.ffi.new(ctype + "*")
    pointer.sType = stype
    for name, value in fields.items():
        setattr(pointer, name, value)
    return pointer


def _check(vk, result: int, function: str) -> None:
    if result != vk.VK_SUCCESS:
        raise RuntimeError(f"{function} failed (VkResult {result})")


def _text(vk, value) -> str:
    """A fixed-size char array of a Vulkan struct as str (the package gives str or cdata)."""
    if isinstance(value, str):
        return value
    return vk.ffi.string(value).decode("utf-8", "replace")


def validation_layer_available() -> bool:
    """Whether the Khronos validation layer is installed (False without native Vulkan)."""
    try:
        vk = _import_vulkan()
        layers = vk.vkEnumerateInstanceLayerProperties()
    except Exception:
        return False
    return any(_text(vk, layer.layerName) == VALIDATION_LAYER for layer in layers)


def _version(vk, packed: int) -> tuple:
    return vk.VK_VERSION_MAJOR(packed), vk.VK_VERSION_MINOR(packed), vk.VK_VERSION_PATCH(packed)


def _create_instance(vk):
    try:
        loader_version = vk.vkEnumerateInstanceVersion()
    except Exception:
        loader_version = vk.VK_MAKE_VERSION(1, 0, 0)
    if _version(vk, loader_version)[:2] < (1, 1):
        raise VulkanUnavailable("the Vulkan loader is older than Vulkan 1.1 (SPIR-V 1.3 needs 1.1)")
    app = vk.VkApplicationInfo(
        pApplicationName="pyshader_tx",
        applicationVersion=1,
        pEngineName="pyshader_tx",
        engineVersion=1,
        apiVersion=min(loader_version, vk.VK_MAKE_VERSION(1, 3, 0)),
    )
    layers, extensions = [], []
    if os.environ.get(VALIDATION_ENV, "") not in ("", "0"):
        available = {_text(vk, p.layerName) for p in vk.vkEnumerateInstanceLayerProperties()}
        if VALIDATION_LAYER not in available:
            raise VulkanUnavailable(
                f"{VALIDATION_ENV} asks for {VALIDATION_LAYER}, which is not installed (Debian:"
                " vulkan-validationlayers)"
            )
        layers, extensions = [VALIDATION_LAYER], ["VK_EXT_debug_utils"]
    info = vk.VkInstanceCreateInfo(
        pApplicationInfo=app,
        enabledLayerCount=len(layers),
        ppEnabledLayerNames=layers or None,
        enabledExtensionCount=len(extensions),
        ppEnabledExtensionNames=extensions or None,
    )
    try:
        instance = vk.vkCreateInstance(info, None)
    except vk.VkError as error:
        raise VulkanUnavailable(f"vkCreateInstance failed: {type(error).__name__}") from None
    return instance, (Validation.create(vk, instance) if layers else None)


class Validation:
    """A debug messenger that collects the validation layer's errors and warnings."""

    def __init__(self):
        self.messages: list = []
        self.messenger = None

    @classmethod
    def create(cls, vk, instance) -> "Validation":
        validation = cls()

        def collect(severity, types, data, user_data):
            validation.messages.append(_text(vk, data.pMessage))
            return vk.VK_FALSE

        info = vk.VkDebugUtilsMessengerCreateInfoEXT(
            messageSeverity=vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT
            | vk.VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
            messageType=vk.VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT
            | vk.VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT,
            pfnUserCallback=collect,
        )
        create = vk.vkGetInstanceProcAddr(instance, "vkCreateDebugUtilsMessengerEXT")
        validation.messenger = create(instance, info, None)
        return validation

    def destroy(self, vk, instance) -> None:
        destroy = vk.vkGetInstanceProcAddr(instance, "vkDestroyDebugUtilsMessengerEXT")
        destroy(instance, self.messenger, None)


def _choose_physical_device(vk, instance):
    """(physical device, properties, queue family) by DEVICE_TYPE_ORDER or the env var."""
    try:
        devices = vk.vkEnumeratePhysicalDevices(instance)
    except vk.VkError:
        devices = []
    candidates = []
    for index, physical in enumerate(devices):
        properties = vk.vkGetPhysicalDeviceProperties(physical)
        if _version(vk, properties.apiVersion)[:2] < (1, 1):
            continue
        families = vk.vkGetPhysicalDeviceQueueFamilyProperties(physical)
        family = next(
            (i for i, f in enumerate(families) if f.queueFlags & vk.VK_QUEUE_COMPUTE_BIT), None
        )
        if family is None:
            continue
        order = [getattr(vk, name) for name in DEVICE_TYPE_ORDER]
        rank = order.index(properties.deviceType) if properties.deviceType in order else 99
        candidates.append((rank, index, physical, properties, family))
    if not candidates:
        raise VulkanUnavailable(
            "no Vulkan 1.1 device with a compute queue (install a driver: mesa-vulkan-drivers"
            " gives the CPU driver lavapipe)"
        )
    chosen = os.environ.get(DEVICE_ENV)
    if chosen is not None:
        matching = [c for c in candidates if str(c[1]) == chosen.strip()]
        if not matching:
            raise VulkanUnavailable(
                f"{DEVICE_ENV}={chosen}: no usable Vulkan device with that index (usable: "
                + ", ".join(str(c[1]) for c in candidates)
                + ")"
            )
        candidates = matching
    _, _, physical, properties, family = min(candidates, key=lambda c: (c[0], c[1]))
    return physical, properties, family


def _feature_structs(vk, api_version: tuple, extensions: set) -> list:
    """[(OptionalFeature, struct instance)] of the feature structs this device has."""
    found = []
    for feature in OPTIONAL_FEATURES:
        core = feature.core is not None and api_version[:2] >= feature.core
        if core or feature.extension in extensions:
            found.append((feature, getattr(vk, feature.struct)()))
    return found


def _chain(vk, structs: list):
    """Link `structs` through pNext (the first is the head); returns the head or None."""
    head = None
    for struct_instance in reversed(structs):
        if head is not None:
            struct_instance.pNext = vk.ffi.addressof(head)
        head = struct_instance
    return head


def _create_device() -> VulkanDevice:
    vk = _import_vulkan()
    instance, validation = _create_instance(vk)
    try:
        device = _create_logical_device(vk, instance)
    except BaseException:
        if validation is not None:
            validation.destroy(vk, instance)
        vk.vkDestroyInstance(instance, None)
        raise
    device.validation = validation
    device.raise_validation_messages("creating the device")
    return device


def _create_logical_device(vk, instance) -> VulkanDevice:
    physical, properties, family = _choose_physical_device(vk, instance)
    name = _text(vk, properties.deviceName)
    api_version = _version(vk, properties.apiVersion)
    extensions = {
        _text(vk, e.extensionName) for e in vk.vkEnumerateDeviceExtensionProperties(physical, None)
    }

    # What the device has: the optional feature structs, queried through one pNext chain.
    structs = _feature_structs(vk, api_version, extensions)
    query = vk.VkPhysicalDeviceFeatures2()
    head = _chain(vk, [s for _, s in structs])
    if head is not None:
        query.pNext = vk.ffi.addressof(head)
    vk.vkGetPhysicalDeviceFeatures2(physical, query)
    enabled_names = set()
    enabled_extensions = []
    for feature, instance_struct in structs:
        present = [f for f in feature.fields if getattr(instance_struct, f)]
        enabled_names.update(present)
        if present and feature.core is not None and api_version[:2] >= feature.core:
            continue
        if present and feature.extension:
            enabled_extensions.append(feature.extension)
    core = {name: getattr(query.features, name) for name in CORE_FEATURES}

    # Enable exactly what is present (a fresh chain: the query's has every field filled in).
    enable_structs = []
    for feature, instance_struct in structs:
        fields = {f: vk.VK_TRUE for f in feature.fields if getattr(instance_struct, f)}
        if fields:
            enable_structs.append(getattr(vk, feature.struct)(**fields))
    enable_features = vk.VkPhysicalDeviceFeatures(
        **{name: vk.VK_TRUE for name, present in core.items() if present}
    )
    enable = vk.VkPhysicalDeviceFeatures2(features=enable_features)
    head = _chain(vk, enable_structs)
    if head is not None:
        enable.pNext = vk.ffi.addressof(head)

    subgroup = vk.VkPhysicalDeviceSubgroupProperties()
    properties2 = vk.VkPhysicalDeviceProperties2(pNext=subgroup)
    vk.vkGetPhysicalDeviceProperties2(physical, properties2)
    operations = set()
    if subgroup.supportedStages & vk.VK_SHADER_STAGE_COMPUTE_BIT:
        for requirement in CAPABILITY_REQUIREMENTS.values():
            if requirement[0] == "subgroup" and subgroup.supportedOperations & getattr(
                vk, requirement[1]
            ):
                operations.add(requirement[1])

    queue_info = vk.VkDeviceQueueCreateInfo(
        queueFamilyIndex=family, queueCount=1, pQueuePriorities=[1.0]
    )
    device = vk.vkCreateDevice(
        physical,
        vk.VkDeviceCreateInfo(
            pNext=enable,
            queueCreateInfoCount=1,
            pQueueCreateInfos=[queue_info],
            enabledExtensionCount=len(enabled_extensions),
            ppEnabledExtensionNames=enabled_extensions or None,
        ),
        None,
    )
    limits = properties.limits
    limit_values = {
        "max_workgroups": tuple(limits.maxComputeWorkGroupCount),
        "max_workgroup_size": tuple(limits.maxComputeWorkGroupSize),
        "max_workgroup_invocations": limits.maxComputeWorkGroupInvocations,
        "max_workgroup_memory": limits.maxComputeSharedMemorySize,
        "max_storage_buffer_range": limits.maxStorageBufferRange,
        "max_uniform_buffer_range": limits.maxUniformBufferRange,
        # For `timing.py`: nanoseconds per timestamp tick, whether every compute queue
        # writes timestamps, and the bits this queue family's timestamps have (0: none).
        "timestamp_period": limits.timestampPeriod,
        "timestamp_compute_and_graphics": bool(limits.timestampComputeAndGraphics),
        "timestamp_valid_bits": (
            vk.vkGetPhysicalDeviceQueueFamilyProperties(physical)[family].timestampValidBits
        ),
    }
    try:
        memory = vk.vkGetPhysicalDeviceMemoryProperties(physical)
        memory_types = [memory.memoryTypes[i].propertyFlags for i in range(memory.memoryTypeCount)]
        queue = vk.vkGetDeviceQueue(device, family, 0)
        command_pool = vk.vkCreateCommandPool(
            device,
            vk.VkCommandPoolCreateInfo(
                flags=vk.VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, queueFamilyIndex=family
            ),
            None,
        )
        command_buffer = vk.vkAllocateCommandBuffers(
            device,
            vk.VkCommandBufferAllocateInfo(
                commandPool=command_pool,
                level=vk.VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                commandBufferCount=1,
            ),
        )[0]
        fence = vk.vkCreateFence(device, vk.VkFenceCreateInfo(), None)
    except BaseException:
        vk.vkDestroyDevice(device, None)
        raise
    return VulkanDevice(
        vk=vk,
        instance=instance,
        physical=physical,
        device=device,
        queue=queue,
        queue_family=family,
        name=name,
        api_version=api_version,
        features=enabled_names | {n for n, present in core.items() if present},
        subgroup_operations=operations,
        subgroup_size=subgroup.subgroupSize,
        limits=limit_values,
        memory_types=memory_types,
        command_pool=command_pool,
        command_buffer=command_buffer,
        fence=fence,
    )
