"""Deploying a build onto a board: `hlsgen boards` and `hlsgen deploy`.

`boards` holds the supported boards (part, memory, the target to build for, the PS and its ports), `ports`
reads the interfaces off a build's RTL top, `zynq` checks a build against a Zynq board and writes the
deploy folder (RTL, images, the model, a Vivado block-design tcl, a PYNQ driver, a README), and `commands`
holds the two click commands.
"""
