func.func @main(%a: tensor<4xindex>) -> tensor<4xindex> {
  return %a : tensor<4xindex>
}
