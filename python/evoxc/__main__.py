"""python -m evoxc: what this installation has — backends, devices, and the xla backend's PJRT plugins."""

import evoxc


def main():
    print(f"evoxc {getattr(evoxc, '__version__', '')}".strip())
    print("backends:", ", ".join(evoxc.backends.available()))
    print("devices:", ", ".join(str(d) for d in evoxc.devices()))
    ok, why = evoxc.xla.available()
    if not evoxc.xla._HAS:
        print("xla: not in this build")
        return
    major, minor = evoxc.xla.header_api_version()
    print(f"xla plugins (PJRT C API {major}.{minor} headers):")
    found = evoxc.xla.discover()
    if not found:
        print("  none found (pip install lammps-jax-pjrt-cpu, or set EVOXC_PJRT_PLUGIN)")
    for c in found:
        print(f"  {c['path']} ({c['platform']})" + (f": rejected, {c['rejected']}" if c["rejected"] else ""))
    if ok:
        info = evoxc.xla.plugin_info()
        print(f"  loaded: {info['path']}, platform {info['platform']} {info['platform_version']}, "
              f"PJRT {info['api_version'][0]}.{info['api_version'][1]}, devices {', '.join(info['devices'])}")
    else:
        print(f"  none loads: {why}")


if __name__ == "__main__":
    main()
