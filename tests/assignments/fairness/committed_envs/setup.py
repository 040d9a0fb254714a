from setuptools import setup

setup(name='micrograd', version='0.1.0', packages=['micrograd'])
