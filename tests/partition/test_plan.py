"""Stages of a partition: colours, segments, boundaries, MACs."""
from hlsgen.partition.onnx_graph import named_nodes, tensor_types
from hlsgen.partition.plan import ACCELERATOR, HOST, plan, stage_of
from tests.partition.models import detector


def _detector():
    model = named_nodes(detector())
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_value = 1
    return model, tensor_types(model)


def test_a_host_op_between_accelerator_layers_makes_two_segments():
    model, types = _detector()
    acc = {"conv1", "relu1", "conv2", "relu2", "head_box", "head_cls", "sig"}
    partition = plan(model, acc, types)
    assert [(s.name, s.side) for s in partition.stages] == [
        ("segment0", ACCELERATOR), ("host0", HOST), ("segment1", ACCELERATOR), ("host1", HOST)]
    seg0, host0, seg1, host1 = partition.stages
    assert seg0.inputs == ("x",) and seg0.outputs == ("r",)
    assert host0.nodes == ("inorm",) and host0.outputs == ("n",)
    assert seg1.inputs == ("n",) and set(seg1.outputs) == {"h1", "scores"}  # scores: an output and ReduceMax's input
    assert set(host1.nodes) == {"exp", "decode", "rmax"}
    assert partition.macs_total == 16 * 16 * (8 * 27 + 8 * 72 + 4 * 8 + 2 * 8)
    assert partition.macs_on_accelerator == partition.macs_total
    assert partition.summary() == ("accelerator: 100.0% of MACs in 2 segments; host: 4 nodes "
                                   "(InstanceNormalization, Exp, Mul, ReduceMax)")


def test_every_edge_goes_to_the_same_or_a_later_stage_and_sides_alternate():
    model, _ = _detector()
    acc = {"conv1", "relu1", "conv2", "relu2", "head_box", "head_cls", "sig", "decode"}
    stage = stage_of(model, acc)
    producer = {t: n.name for n in model.graph.node for t in n.output}
    for node in model.graph.node:
        assert (stage[node.name] % 2 == 1) == (node.name in acc)
        for t in node.input:
            if t in producer:
                assert stage[producer[t]] <= stage[node.name]


def test_a_model_whole_on_the_accelerator_is_one_segment():
    model, types = _detector()
    partition = plan(model, {n.name for n in model.graph.node}, types)
    assert partition.whole_on_accelerator and partition.host_nodes == []
