"""Hand-written NNEF documents for accept/reject parity with the Khronos
reference parser (PyPI `nnef`). Each case: (name, text, expectation) where
expectation is "accept", "reject", or ("stricter", why) / ("lenient", why) for
the documented places where this importer deliberately differs from the
reference (it then only checks our own verdict).
"""
V = "version 1.0;\n"
EXPR = "extension KHR_enable_operator_expressions;\n"
FRAG = "extension KHR_enable_fragment_definitions;\n"
BOTH = "extension KHR_enable_fragment_definitions, KHR_enable_operator_expressions;\n"


def G(body, sig="( x ) -> ( y )", head=V):
    return head + "graph G" + sig + "\n{\n" + body + "\n}\n"


X4 = "    x = external(shape = [1, 4, 8, 8]);\n"

CASES = [
    # ---------------------------------------------------------------- accepted
    ("relu", G(X4 + "    y = relu(x);"), "accept"),
    ("comments", "# a comment\n" + G(X4 + "    # inside\n    y = relu(x); # trailing"), "accept"),
    ("conv-bias-pad", G(X4 + "    w = variable(shape = [8, 4, 3, 3], label = 'conv/w');\n"
                        "    b = variable(shape = [1, 8], label = 'conv/b');\n"
                        "    y = conv(x, w, b, padding = [(1,1), (1,1)], stride = [1, 1], border = 'constant');"), "accept"),
    ("conv-auto-pad", G(X4 + "    w = variable(shape = [8, 4, 3, 3], label = 'w');\n"
                        "    y = conv(x, w, stride = [2, 2], padding = []);"), "accept"),
    ("conv-groups0", G(X4 + "    w = variable(shape = [4, 1, 3, 3], label = 'w');\n    y = conv(x, w, groups = 0);"), "accept"),
    ("deconv-auto", G(X4 + "    w = variable(shape = [4, 2, 3, 3], label = 'w');\n    y = deconv(x, w, stride = [2, 2]);"),
     "accept"),
    ("deconv-output-shape", G(X4 + "    w = variable(shape = [4, 2, 3, 3], label = 'w');\n"
                              "    y = deconv(x, w, stride = [2, 2], padding = [(1,1),(1,1)], output_shape = [1, 2, 16, 16]);"),
     "accept"),
    ("max-pool-ignore", G(X4 + "    y = max_pool(x, size = [1, 1, 3, 3], stride = [1, 1, 2, 2], border = 'ignore',"
                          " padding = [(0,0), (0,0), (0,0), (0,0)]);"), "accept"),
    ("avg-pool-dq", G(X4 + "    y = avg_pool(x, size = [1, 1, 2, 2], stride = [1, 1, 2, 2], border = \"constant\");"),
     "accept"),
    ("bare-tuple-lhs", G(X4 + "    y, i = max_pool_with_index(x, size = [1, 1, 2, 2], stride = [1, 1, 2, 2]);",
                         "( x ) -> ( y, i )"), "accept"),
    ("paren-tuple-lhs", G(X4 + "    (y, i) = max_pool_with_index(x, size = [1, 1, 2, 2]);", "( x ) -> ( y, i )"),
     "accept"),
    ("split-array-lhs", G(X4 + "    [a, b] = split(x, axis = 1, ratios = [1, 3]);", "( x ) -> ( a, b )"), "accept"),
    ("concat", G(X4 + "    y = concat([x, x, x], axis = 1);"), "accept"),
    ("named-tensor-args", G(X4 + "    m = variable(shape = [1, 4], label = 'bn/m');\n"
                            "    v = variable(shape = [1, 4], label = 'bn/v');\n"
                            "    y = batch_normalization(x, mean = m, variance = v, offset = 0.0, scale = 1.0, epsilon = 1e-5);"),
     "accept"),
    ("left-aligned-bcast", G(X4 + "    b = external(shape = [1, 4]);\n    y = add(x, b);", "( x, b ) -> ( y )"), "accept"),
    ("literal-scalar-tensor", G(X4 + "    y = mul(x, 2.0);"), "accept"),
    ("negative-literal", G(X4 + "    y = leaky_relu(x, alpha = -0.5);"), "accept"),
    ("exponent-literal", G(X4 + "    y = leaky_relu(x, alpha = 1e-2);"), "accept"),
    ("generic-external", G("    x = external<integer>(shape = [2, 3]);\n    y = cast<scalar>(x);"), "accept"),
    ("logical-select", G(X4 + "    c = gt(x, 0.0);\n    y = select(c, x, 0.0);"), "accept"),
    ("slice-deprecated-end", G("    x = external(shape = [4, 6]);\n    y = slice(x, axes = [1], begin = [2], end = [0]);"),
     "accept"),
    ("slice-reverse", G("    x = external(shape = [4, 6]);\n    y = slice(x, axes = [1], begin = [-1], end = [-7], stride = [-1]);"),
     "accept"),
    ("reshape-partial", G(X4 + "    y = reshape(x, shape = [-1], axis_start = 2, axis_count = 2);"), "accept"),
    ("linear-quantize-alias", G(X4 + "    y = linear_quantize(x, min = 0.0, max = 1.0, bits = 8);"), "accept"),
    ("extension-comma-list", G(X4 + "    y = relu(x);", head=V + "extension KHR_enable_fragment_definitions, "
                               "KHR_enable_operator_expressions;\n"), "accept"),
    ("expressions", G(X4 + "    y = relu(x) * 2.0 + x / 3.0;", head=V + EXPR), "accept"),
    ("expr-compile-time", G(X4 + "    y = reshape(x, shape = [for i in [1, 4, 64] yield i] if 2 > 1 else [256]);",
                            head=V + EXPR), "accept"),
    ("fragment", G(X4 + "    y = scaled(x, k = 3.0);", head=V + BOTH +
                   "fragment scaled( x: tensor<scalar>, k: scalar = 2.0 ) -> ( y: tensor<scalar> )\n"
                   "{\n    t = mul(x, k);\n    y = relu(t);\n}\n"), "accept"),
    ("fragment-generic", G("    x = external<integer>(shape = [2, 3]);\n    y = ident(x);", head=V + BOTH +
                           "fragment ident<?>( x: tensor<?> ) -> ( y: tensor<?> ) { y = copy<?>(x); }\n"), "accept"),
    ("custom-primitive", G(X4 + "    y = my_op(x, k = 3);", head=V + FRAG +
                           "fragment my_op( x: tensor<scalar>, k: integer = 1 ) -> ( y: tensor<scalar> );\n"), "accept"),
    ("update", G(X4 + "    v = variable(shape = [1, 4, 8, 8], label = 'state');\n    y = update(v, x);"), "accept"),
    ("copy-n", G(X4 + "    [a, b] = copy_n(x, times = 2);", "( x ) -> ( a, b )"), "accept"),
    ("softmax-axes", G(X4 + "    y = softmax(x, axes = [2, 3]);"), "accept"),
    ("gather", G("    x = external(shape = [5, 3]);\n    i = external<integer>(shape = [2]);\n"
                 "    y = gather(x, i, axis = 0);", "( x, i ) -> ( y )"), "accept"),

    # ---------------------------------------------------------------- rejected
    ("missing-paren", G(X4 + "    y = relu(x;"), "reject"),
    ("missing-semicolon", G(X4 + "    y = relu(x)"), "reject"),
    ("no-version", "graph G( x ) -> ( y )\n{\n" + X4 + "    y = relu(x);\n}\n", "reject"),
    ("version-1.1", G(X4 + "    y = relu(x);", head="version 1.1;\n"), "reject"),
    ("version-integer", G(X4 + "    y = relu(x);", head="version 1;\n"), "reject"),
    ("unknown-extension", G(X4 + "    y = relu(x);", head=V + "extension KHR_frobnicate;\n"), "reject"),
    ("int-as-scalar", G(X4 + "    y = leaky_relu(x, alpha = 1);"), "reject"),
    ("int-literal-tensor", G(X4 + "    y = add(x, 2);"), "reject"),
    ("unknown-op", G(X4 + "    y = frobnicate(x);"), "reject"),
    ("duplicate-assignment", G(X4 + "    y = relu(x);\n    y = relu(x);"), "reject"),
    ("use-before-definition", G(X4 + "    y = add(x, z);\n    z = relu(x);"), "reject"),
    ("external-not-param", G(X4 + "    z = external(shape = [2]);\n    y = relu(x);"), "reject"),
    ("param-not-external", G("    x = variable(shape = [2], label = 'x');\n    y = relu(x);"), "reject"),
    ("result-not-assigned", G(X4 + "    z = relu(x);"), "reject"),
    ("named-before-positional", G(X4 + "    y = add(x = x, x);"), "reject"),
    ("attribute-positional", G(X4 + "    y = leaky_relu(x, 0.5);"), "reject"),
    ("duplicate-argument", G(X4 + "    y = max_pool(x, size = [1,1,2,2], size = [1,1,2,2]);"), "reject"),
    ("missing-argument", G(X4 + "    y = max_pool(x);"), "reject"),
    ("too-many-positional", G(X4 + "    y = relu(x, x);"), "reject"),
    ("split-tuple-lhs", G(X4 + "    a, b = split(x, axis = 1, ratios = [1, 1]);", "( x ) -> ( a, b )"), "reject"),
    ("variable-in-fragment", G(X4 + "    y = f(x);", head=V + FRAG +
                               "fragment f( x: tensor<scalar> ) -> ( y: tensor<scalar> )\n"
                               "{\n    v = variable(shape = [1], label = 'v');\n    y = add(x, v);\n}\n"), "reject"),
    ("fragment-without-extension", G(X4 + "    y = f(x);", head=V +
                                     "fragment f( x: tensor<scalar> ) -> ( y: tensor<scalar> ) { y = relu(x); }\n"),
     "reject"),
    ("expression-without-extension", G(X4 + "    y = x + x;"), "reject"),
    ("padding-length", G(X4 + "    y = max_pool(x, size = [1, 1, 2, 2], padding = [(0, 0)]);"), "reject"),
    ("logical-arithmetic", G("    x = external<logical>(shape = [2]);\n    y = add(x, x);"), "reject"),
    ("broadcast-mismatch", G("    x = external(shape = [2, 3]);\n    b = external(shape = [3]);\n    y = add(x, b);",
                             "( x, b ) -> ( y )"), "reject"),
    ("keyword-identifier", G(X4 + "    for = relu(x);\n    y = relu(x);"), "reject"),
    ("trailing-garbage", G(X4 + "    y = relu(x);") + "graph", "reject"),
    ("param-and-result", G("    x = external(shape = [2]);", "( x ) -> ( x )"), "reject"),
    ("generic-ambiguous", G(X4 + "    c = external<integer>(shape = [1, 4, 8, 8]);\n"
                            "    y = select(gt(x, 0.0), x, c);", "( x, c ) -> ( y )", head=V + EXPR), "reject"),
    ("undeclared-in-fragment", G(X4 + "    y = relu(x);", head=V + FRAG +
                                 "fragment f( x: tensor<scalar> ) -> ( y: tensor<scalar> ) { y = relu(z); }\n"), "reject"),
    ("empty-extension", G(X4 + "    y = relu(x);", head=V + "extension;\n"), "reject"),
    ("split-ratios", G(X4 + "    [a, b] = split(x, axis = 1, ratios = [1, 2]);", "( x ) -> ( a, b )"), "reject"),
    ("slice-invalid-range", G("    x = external(shape = [1, 10]);\n"
                              "    y = slice(x, axes = [1], begin = [3], end = [1], stride = [1]);"), "reject"),
    ("conv-channels", G(X4 + "    w = variable(shape = [8, 3, 3, 3], label = 'w');\n    y = conv(x, w);"), "reject"),
    ("matmul-inner", G("    x = external(shape = [2, 3]);\n    w = variable(shape = [4, 5], label = 'w');\n"
                       "    y = matmul(x, w);"), "reject"),
    ("reshape-volume", G(X4 + "    y = reshape(x, shape = [3, 7]);"), "reject"),
    ("cast-no-type", G(X4 + "    y = cast(x);"), "reject"),

    # --------------------------------------------------- deliberate differences
    ("bogus-border", G(X4 + "    y = max_pool(x, size = [1, 1, 2, 2], border = 'bogus');"),
     ("stricter", "the reference accepts any border string and fails only when executing")),
    ("zero-extent", G("    x = external(shape = [0]);\n    y = relu(x);"),
     ("stricter", "spec §4.1.1: shape items must be strictly positive")),
    ("constant-value-length", G(X4 + "    c = constant(shape = [2], value = [1.0, 2.0, 3.0]);\n    y = add(x, c);"),
     ("stricter", "spec §4.1.2: the value length must equal the volume or be 1")),
    ("label-characters", G(X4 + "    v = variable(shape = [1, 4], label = 'a b');\n    y = add(x, v);"),
     ("stricter", "spec §4.1.3: labels use [a-zA-Z0-9_-./\\\\] only")),
    ("shared-label-shape", G(X4 + "    v = variable(shape = [1, 4], label = 'a');\n"
                             "    w = variable(shape = [1, 2], label = 'A');\n    y = add(x, v);"),
     ("stricter", "spec §4.1.3: variables sharing a label must have the same shape")),
    ("string-escape", G(X4 + "    v = variable(shape = [1, 4], label = 'it\\'s');\n    y = add(x, v);"),
     "reject"),
    ("extension-space-list", G(X4 + "    y = relu(x);", head=V + "extension KHR_enable_fragment_definitions "
                               "KHR_enable_operator_expressions;\n"),
     ("lenient", "spec §3.2.4 grammar separates extension names by whitespace; the reference wants commas")),
    ("shape-of", G(X4 + "    y = reshape(x, shape = shape_of(x));", head=V + EXPR),
     ("lenient", "shape_of is deprecated but part of NNEF 1.0; the reference rejects it")),
]
